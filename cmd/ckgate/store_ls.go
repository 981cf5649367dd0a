package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
)

func (e *env) storeLsCommand() *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list the keys under a store root",
		ArgsUsage: "URL [PREFIX]",
		Description: "Lists the keys under URL that start with PREFIX (a key prefix such as offsets/ or off),\n" +
			"in lexical order, with size in bytes, version and modification time (UTC).\n" +
			"Without -r, keys below the next '/' are folded into one DIR/ line with their total size.\n" +
			"JSON output is one array of {key, size, version, modified} objects; folded directories\n" +
			"have \"dir\": true and an \"objects\" count.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "recursive", Aliases: []string{"r"}, Usage: "list every key, do not fold directories"},
			formatFlag(),
		},
		Action: e.storeLs,
	}
}

// lsEntry is one line of ls: an object, or a folded directory.
type lsEntry struct {
	Key      string     `json:"key"`
	Dir      bool       `json:"dir,omitempty"`
	Objects  int        `json:"objects,omitempty"`
	Size     int64      `json:"size"`
	Version  string     `json:"version,omitempty"`
	Modified *time.Time `json:"modified,omitempty"`
}

func (e *env) storeLs(c *cli.Context) error {
	a, f, err := argsFormat(c, 1, 2)
	if err != nil {
		return err
	}
	prefix := ""
	if len(a) == 2 {
		prefix = a[1]
	}
	return e.withStore(c, a[0], func(s gateway.Store) error {
		var out lsWriter = newLsTable(e.stdout)
		if f == "json" {
			out = &lsJSON{w: e.stdout}
		}
		fold := newFolder(prefix, !c.Bool("recursive"), out.write)
		for attrs, err := range s.List(c.Context, prefix) {
			if err != nil {
				return err
			}
			if err := fold.add(attrs); err != nil {
				return err
			}
		}
		if err := fold.flush(); err != nil {
			return err
		}
		return out.close()
	})
}

// folder turns the lexical stream of keys into ls entries; when folding,
// keys with a '/' after the prefix collapse into one directory entry.
// Keys that share a directory are contiguous in lexical order, so one
// pending entry suffices.
type folder struct {
	prefix  string
	fold    bool
	emit    func(lsEntry) error
	pending *lsEntry
}

func newFolder(prefix string, fold bool, emit func(lsEntry) error) *folder {
	return &folder{prefix: prefix, fold: fold, emit: emit}
}

func (f *folder) add(a gateway.Attrs) error {
	e := lsEntry{Key: a.Key, Size: a.Size, Version: string(a.Version)}
	if !a.Modified.IsZero() {
		m := a.Modified.UTC()
		e.Modified = &m
	}
	if f.fold {
		rest := strings.TrimPrefix(a.Key, f.prefix)
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			dir := a.Key[:len(a.Key)-len(rest)+i+1]
			if f.pending != nil && f.pending.Key == dir {
				f.pending.Objects++
				f.pending.Size += a.Size
				if e.Modified != nil && (f.pending.Modified == nil || e.Modified.After(*f.pending.Modified)) {
					f.pending.Modified = e.Modified
				}
				return nil
			}
			if err := f.flush(); err != nil {
				return err
			}
			f.pending = &lsEntry{Key: dir, Dir: true, Objects: 1, Size: a.Size, Modified: e.Modified}
			return nil
		}
	}
	if err := f.flush(); err != nil {
		return err
	}
	return f.emit(e)
}

func (f *folder) flush() error {
	if f.pending == nil {
		return nil
	}
	p := *f.pending
	f.pending = nil
	return f.emit(p)
}

type lsWriter interface {
	write(lsEntry) error
	close() error
}

// lsTable prints an aligned table; nothing at all for an empty listing.
type lsTable struct {
	t    *output.Table
	rows int
}

func newLsTable(w io.Writer) *lsTable {
	return &lsTable{t: output.NewTable(w)}
}

func (t *lsTable) write(e lsEntry) error {
	if t.rows == 0 {
		t.t.Row("KEY", "SIZE", "VERSION", "MODIFIED")
	}
	t.rows++
	version, modified := e.Version, "-"
	if e.Dir {
		version = fmt.Sprintf("(%d objects)", e.Objects)
	}
	if version == "" {
		version = "-"
	}
	if e.Modified != nil {
		modified = e.Modified.Format(time.RFC3339)
	}
	t.t.Row(printableKey(e.Key), e.Size, version, modified)
	return nil
}

func (t *lsTable) close() error { return t.t.Flush() }

// printableKey quotes a key that would garble a terminal line.
func printableKey(k string) string {
	for _, r := range k {
		if !strconv.IsPrint(r) || r == '\t' {
			return strconv.Quote(k)
		}
	}
	return k
}

// lsJSON streams one JSON array, an element per entry.
type lsJSON struct {
	w    io.Writer
	rows int
}

func (j *lsJSON) write(e lsEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	sep := ",\n  "
	if j.rows == 0 {
		sep = "[\n  "
	}
	j.rows++
	_, err = fmt.Fprintf(j.w, "%s%s", sep, b)
	return err
}

func (j *lsJSON) close() error {
	if j.rows == 0 {
		_, err := io.WriteString(j.w, "[]\n")
		return err
	}
	_, err := io.WriteString(j.w, "\n]\n")
	return err
}
