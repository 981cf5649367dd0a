package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
)

// MaxFileBytes bounds every checkpoint file ckgate reads whole (metadata,
// offsets/N, commits/N, the writer record, the plan and the other small
// records under _ckgate): 16 MiB, far above what ckgate or Spark write.
const MaxFileBytes = 16 << 20

// MaxLineBytes bounds one line of a log that is streamed rather than read
// whole (the compactible logs: _spark_metadata/N.compact, sources/*/N.compact):
// 1 MiB, where one entry (a file's path, size and times) takes well under
// 4 KiB.
const MaxLineBytes = 1 << 20

// GetBounded reads key whole, like Store.Get, but never allocates more
// than limit bytes (MaxFileBytes when limit <= 0): the object is opened once
// (GetStream, one request), an announced size above limit is refused before
// any byte is read, and the body is read through a limit of limit+1, so an
// object that grew after it was opened is refused too. A refusal is an
// *Error of kind ErrTooLarge naming the key and both sizes.
func GetBounded(ctx context.Context, s Store, key string, limit int64) ([]byte, Version, error) {
	if limit <= 0 {
		limit = MaxFileBytes
	}
	rc, a, err := s.GetStream(ctx, key)
	if err != nil {
		if rc != nil {
			rc.Close()
		}
		return nil, "", err
	}
	defer rc.Close()
	if a.Size > limit {
		return nil, "", tooLarge(key, a.Size, limit)
	}
	buf := bytes.NewBuffer(make([]byte, 0, max(a.Size, 0)+1))
	n, err := buf.ReadFrom(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, "", E("get", key, KindOr(err, ErrUnavailable), err)
	}
	if n > limit {
		return nil, "", tooLarge(key, -1, limit)
	}
	return buf.Bytes(), a.Version, nil
}

// tooLarge is the ErrTooLarge error for key; size < 0 means "more than
// limit" (the object grew while it was read).
func tooLarge(key string, size, limit int64) error {
	what := "more than " + sizeText(limit)
	if size >= 0 {
		what = sizeText(size)
	}
	return E("get", key, ErrTooLarge, fmt.Errorf("%q holds %s, more than the %s a checkpoint file of this kind may hold: it is not read", key, what, sizeText(limit)))
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// KindOr returns the kind of err, or def when err has none.
func KindOr(err, def error) error {
	if k := KindOf(err); k != nil {
		return k
	}
	return def
}

// Lines streams key line by line (without the line ends) and never holds
// more than one line of at most limit bytes (MaxLineBytes when limit <= 0). A
// longer line ends the sequence with an ErrTooLarge error naming the key and
// the line number; a read error ends it with that error (naming the key).
// The yielded bytes are valid until the next iteration.
func Lines(ctx context.Context, s Store, key string, limit int) iter.Seq2[[]byte, error] {
	if limit <= 0 {
		limit = MaxLineBytes
	}
	return func(yield func([]byte, error) bool) {
		rc, _, err := s.GetStream(ctx, key)
		if err != nil {
			if rc != nil {
				rc.Close()
			}
			yield(nil, err)
			return
		}
		defer rc.Close()
		r := bufio.NewReaderSize(rc, 64<<10)
		var buf []byte
		for line := 1; ; line++ {
			if err := ctx.Err(); err != nil {
				yield(nil, E("get", key, ErrUnavailable, err))
				return
			}
			buf = buf[:0]
			for {
				var chunk []byte
				chunk, err = r.ReadSlice('\n')
				buf = append(buf, chunk...)
				if len(buf) > limit+1 { // +1: the line end
					yield(nil, lineTooLong(key, line, limit))
					return
				}
				if !errors.Is(err, bufio.ErrBufferFull) {
					break
				}
			}
			if err != nil && !errors.Is(err, io.EOF) {
				yield(nil, E("get", key, KindOr(err, ErrUnavailable), err))
				return
			}
			eof := err != nil
			if eof && len(buf) == 0 {
				return
			}
			buf = bytes.TrimSuffix(buf, []byte{'\n'})
			if len(buf) > limit {
				yield(nil, lineTooLong(key, line, limit))
				return
			}
			if !yield(buf, nil) || eof {
				return
			}
		}
	}
}

func lineTooLong(key string, line, limit int) error {
	return E("get", key, ErrTooLarge, fmt.Errorf("%q line %d is longer than %s: it is not read", key, line, sizeText(int64(limit))))
}
