//go:build unix

package main

import (
	"strings"
	"testing"
)

// FuzzRunnableBlocks: any markdown splits into blocks without a panic,
// and every line of a block comes from inside a marked fence.
func FuzzRunnableBlocks(f *testing.F) {
	f.Add("<!-- runnable -->\n```sh\nckgate inspect demo/checkpoint\n```\n")
	f.Add("<!-- runnable -->\n```sh\nx # exit 4\n")
	f.Add("```sh\n<!-- runnable -->\n```sh\n```\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, md string) {
		blocks := runnableBlocks(md)
		if len(blocks) > strings.Count(md, runnableMarker) {
			t.Fatalf("%d blocks from %d markers", len(blocks), strings.Count(md, runnableMarker))
		}
	})
}
