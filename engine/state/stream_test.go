package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// failAfter serves data, then fails with err instead of ending.
type failAfter struct {
	r   io.Reader
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

func TestCheckStreams(t *testing.T) {
	e := NewEncoder(Header{Version: 4, Depth: 1, Base: "3_a.delta"}, 0)
	e.Add(Change{Key: []byte("a"), Value: []byte("1")})
	e.Add(Change{Key: []byte("b"), Delete: true})
	good, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	h, n, err := Check(bytes.NewReader(good))
	if err != nil || h.Base != "3_a.delta" || h.Version != 4 || n != int64(len(good)) {
		t.Fatalf("good file: %+v %d %v", h, n, err)
	}
	// A read error of the store is reported as it is, not as damage.
	boom := errors.New("connection reset")
	if _, _, err := Check(&failAfter{r: bytes.NewReader(good[:len(good)/2]), err: boom}); !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) {
		t.Errorf("read error: %v", err)
	}
	// A record that claims a 1 TiB value is refused at its length, before
	// anything is allocated or read for it.
	head := NewEncoder(Header{Snapshot: true, Version: 1}, 0)
	b, _ := head.Finish()
	b = b[:len(b)-5] // drop the end marker and the checksum
	b = append(b, opPut, 1, 'k')
	b = binary.AppendUvarint(b, 1<<40)
	_, n, err = Check(io.MultiReader(bytes.NewReader(b), zeros{}))
	if !errors.Is(err, ErrCorrupt) || n > int64(len(b))+64<<10 {
		t.Errorf("a 1 TiB value: %v after %d bytes", err, n)
	}
}

// zeros reads as an endless run of zero bytes (a sparse file).
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
