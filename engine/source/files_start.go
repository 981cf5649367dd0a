package source

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// FilesStart is the boundary of a files source on a root started fresh
// (lifecycle.FreshStart): the input files it names, or that were modified
// before ModifiedFrom, are treated as processed by the old checkpoint and
// are never input of the new one; every other file is new input. Unlike
// Kafka's initial offsets, which the first batch records in sources/<i>/0,
// the boundary is a filter the source applies on every run: the root keeps
// StartKey for its whole life.
type FilesStart struct {
	// Path is the canonical URL of the input directory the boundary was
	// made for; a source reading another directory refuses it. Empty: not
	// checked (a Spark checkpoint records no input path).
	Path string `json:"path,omitempty"`
	// ModifiedFrom: a file modified before this time is treated as
	// processed; one modified at or after it is new input.
	ModifiedFrom *time.Time `json:"modified_from,omitempty"`
	// Processed are the input files (full paths, as the file source log
	// records them) treated as processed: those the old checkpoint's file
	// source log recorded up to the boundary.
	Processed []string `json:"processed,omitempty"`
	// FromLogOffset, when the boundary was made from the old checkpoint's
	// file source log, is the last log offset carried over (recorded).
	FromLogOffset *int64 `json:"from_log_offset,omitempty"`
}

// filesBoundary is a FilesStart ready to test files against.
type filesBoundary struct {
	before *time.Time
	done   map[string]bool
}

// processed reports whether the boundary treats the file at p, modified
// at mod, as processed (a nil boundary treats nothing so).
func (b *filesBoundary) processed(p string, mod time.Time) bool {
	if b == nil {
		return false
	}
	return b.done[p] || (b.before != nil && mod.Before(*b.before))
}

// loadStart reads the root's start point, if it has one. A start point
// that is not for this files source (Kafka offsets, another input
// directory, no boundary) is an error rather than silently ignored.
func (f *files) loadStart(ctx context.Context) error {
	sp, err := ReadStart(ctx, f.env.Checkpoint)
	if err != nil || sp == nil {
		return err
	}
	fs := sp.Files
	if fs == nil {
		return fmt.Errorf("%s: no files boundary (the source reads files at %s; the new root was started for another source)", StartKey, f.url)
	}
	if fs.Path != "" && strings.TrimSuffix(fs.Path, "/") != f.url {
		return fmt.Errorf("%s: the boundary is for the input %s; the source reads %s", StartKey, fs.Path, f.url)
	}
	if fs.ModifiedFrom == nil && len(fs.Processed) == 0 {
		return fmt.Errorf("%s: the files boundary names neither a time nor processed files", StartKey)
	}
	b := &filesBoundary{before: fs.ModifiedFrom, done: make(map[string]bool, len(fs.Processed))}
	for _, p := range fs.Processed {
		b.done[p] = true
	}
	f.start = b
	return nil
}
