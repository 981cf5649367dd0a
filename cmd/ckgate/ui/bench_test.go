package ui

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/emulator"
)

// BenchmarkFleetPage1000Local: discover, inspect and render 1,000
// checkpoints on the local disk.
func BenchmarkFleetPage1000Local(b *testing.B) {
	l := &Loader{Roots: []Root{fileRoot(b, localFleet(b, 1000))}}
	var size int
	var took time.Duration
	for b.Loop() {
		start := time.Now()
		f, err := l.LoadFleet(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		if err := RenderFleet(&out, f, url.Values{}); err != nil {
			b.Fatal(err)
		}
		took, size = time.Since(start), out.Len()
		if len(f.Checkpoints) != 1000 {
			b.Fatalf("%d checkpoints", len(f.Checkpoints))
		}
	}
	benchsum.Record(b, "ui_fleet_1000_local_s", took.Seconds(), "s", "<3")
	benchsum.Record(b, "ui_fleet_page_kb", float64(size)/1024, "KB", "<500")
}

// BenchmarkCheckpointPage10000: read and render a 10,000-batch checkpoint,
// and write its single-file report.
func BenchmarkCheckpointPage10000(b *testing.B) {
	dir := b.TempDir()
	writeDir(b, filepath.Join(dir, "big"), synthFiles(b, "11111111-0000-4000-8000-000000000000", 10_000, true))
	l := &Loader{Roots: []Root{fileRoot(b, dir)}}
	var size, report int
	var took time.Duration
	for b.Loop() {
		start := time.Now()
		c, err := l.LoadCheckpoint(context.Background(), l.Roots[0], "big")
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		if err := RenderCheckpoint(&out, c, nil, l.now(), url.Values{}); err != nil {
			b.Fatal(err)
		}
		took, size = time.Since(start), out.Len()
		var rep bytes.Buffer
		if err := WriteReport(&rep, &Fleet{Checkpoints: []Checkpoint{*c}, Now: l.now()}, []*Checkpoint{c}); err != nil {
			b.Fatal(err)
		}
		report = rep.Len()
	}
	benchsum.Record(b, "ui_checkpoint_10000_batches_s", took.Seconds(), "s", "<1")
	benchsum.Record(b, "ui_checkpoint_page_kb", float64(size)/1024, "KB", "<500")
	benchsum.Record(b, "ui_report_10000_batches_mb", float64(report)/(1<<20), "MB", "<3")
}

// BenchmarkFleetPage1000S3: the same fleet on the S3 emulator (versitygw):
// the listing is paged, the checkpoints inspected in parallel.
func BenchmarkFleetPage1000S3(b *testing.B) {
	ctx := context.Background()
	emu := emulator.Versitygw(b)
	raw := fmt.Sprintf("s3://ckgate-ui-fleet/checkpoints?region=%s&endpoint=%s&path_style=true", emu.Region, emu.Endpoint)
	st, err := stores.Open(ctx, raw)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gateway.Close(st) })
	if err := gateway.MakeBucket(ctx, st); err != nil {
		b.Fatal(err)
	}
	putFleet(b, st, 1000)
	root, err := NewRoot(raw, st)
	if err != nil {
		b.Fatal(err)
	}
	l := &Loader{Roots: []Root{root}}
	var took time.Duration
	for b.Loop() {
		start := time.Now()
		f, err := l.LoadFleet(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		if err := RenderFleet(&out, f, url.Values{}); err != nil {
			b.Fatal(err)
		}
		took = time.Since(start)
		if len(f.Checkpoints) != 1000 {
			b.Fatalf("%d checkpoints", len(f.Checkpoints))
		}
		for _, c := range f.Checkpoints {
			if c.Report == nil {
				b.Fatalf("%s: %s", c.URL, c.Err)
			}
		}
	}
	benchsum.Record(b, "ui_fleet_1000_s3_s", took.Seconds(), "s", "<10")
}
