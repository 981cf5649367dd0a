package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
)

// streamThreshold is the size above which put streams instead of reading
// the whole input into memory.
const streamThreshold = 8 << 20

func (e *env) storePutCommand() *cli.Command {
	return &cli.Command{
		Name:      "put",
		Usage:     "write a local file to a key (create-only unless --overwrite)",
		ArgsUsage: "FILE URL KEY",
		Description: "Writes FILE (- for stdin) to KEY under URL. By default the write is create-only and\n" +
			"atomic: if KEY exists it is left alone and put exits 3. --overwrite replaces it\n" +
			"unconditionally. Inputs larger than 8 MiB are streamed. Prints the new version." + storePolicyHelp,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "overwrite", Usage: "replace KEY if it exists (unconditional write)"},
		}, storePolicyFlags()...),
		Action: e.storePut,
	}
}

func (e *env) storePut(c *cli.Context) error {
	a, err := args(c, 3, 3)
	if err != nil {
		return err
	}
	file, raw, key := a[0], a[1], a[2]
	cond := gateway.IfAbsent()
	if c.Bool("overwrite") {
		cond = gateway.None()
	}
	in, size, closeIn, err := e.openInput(file)
	if err != nil {
		return err
	}
	defer closeIn()
	return e.withStore(c, raw, func(s gateway.Store) error {
		s, closeLog, err := e.guardStore(c, s, raw)
		if err != nil {
			return err
		}
		defer closeLog()
		stream := size > streamThreshold
		var head []byte
		if !stream {
			// Small or of unknown size (stdin, a pipe): read up to the
			// threshold, and stream only when there is more.
			b, err := io.ReadAll(io.LimitReader(in, streamThreshold+1))
			if err != nil {
				return &InputError{Err: fmt.Errorf("read %s: %w", file, err)}
			}
			head, stream = b, len(b) > streamThreshold
		}
		var (
			v gateway.Version
			n int64
		)
		if stream {
			counted := &gateway.CountingReader{R: io.MultiReader(bytes.NewReader(head), in)}
			v, err = s.PutStream(c.Context, key, counted, cond)
			n = counted.N
		} else {
			v, err = s.Put(c.Context, key, head, cond)
			n = int64(len(head))
		}
		switch {
		case errors.Is(err, gateway.ErrExists) && cond.Kind == gateway.CondIfAbsent:
			return fmt.Errorf("%w (create-only: pass --overwrite to replace it)", err)
		case errors.Is(err, gateway.ErrExists):
			return fmt.Errorf("%w (it was created while this put was decided as a create: nothing was replaced)", err)
		case err != nil:
			return refusalHint(c, err)
		}
		fmt.Fprintf(e.stdout, "put %q: %d bytes, version %s\n", key, n, v)
		return nil
	})
}

// openInput opens FILE, or stdin for "-". size is the file's size, or -1
// when unknown.
func (e *env) openInput(name string) (r io.Reader, size int64, closeFn func(), err error) {
	if name == "-" {
		return e.stdin, -1, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, nil, &InputError{Err: err}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, nil, &InputError{Err: err}
	}
	if st.IsDir() {
		f.Close()
		return nil, 0, nil, &InputError{Err: fmt.Errorf("%s is a directory", name)}
	}
	size = -1
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	return f, size, func() { f.Close() }, nil
}
