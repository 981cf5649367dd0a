package s3serve

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestGetBodySmallCopyBuffer: fasthttp writes a 4 KiB GET body (a
// readCloser, as GetObject answers) to a TCP connection intact, copying it
// through a buffer the size of the body, not io.Copy's 32 KiB (which the
// connection's ReadFrom took for a reader that is no io.WriterTo).
func TestGetBodySmallCopyBuffer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		b := bytes.NewBuffer(make([]byte, 0, 1<<20)) // room for every answer: nothing allocated while measured
		_, _ = b.ReadFrom(c)
		got <- b.Bytes()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	object := bytes.Repeat([]byte("0123456789abcdef"), 256) // 4 KiB
	w := bufio.NewWriterSize(c, 4096)                       // fasthttp's default write buffer
	get := func() {
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseResponse(resp)
		rc := io.NopCloser(bytes.NewReader(object))
		resp.SetBodyStream(readCloser{io.LimitReader(rc, int64(len(object))), rc}, len(object))
		if err := resp.Write(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	get() // fasthttp's pooled response and the connection, once
	const gets = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range gets {
		get()
	}
	runtime.ReadMemStats(&after)
	c.Close()
	if perGet := (after.TotalAlloc - before.TotalAlloc) / gets; perGet > 8<<10 {
		t.Errorf("writing a 4 KiB GET body allocated %d bytes per GET, want under 8 KiB (a copy buffer the size of the body, not 32 KiB)", perGet)
	}
	answers := <-got
	if n := bytes.Count(answers, object); n != gets+1 {
		t.Errorf("the connection got %d whole bodies, want %d", n, gets+1)
	}
}
