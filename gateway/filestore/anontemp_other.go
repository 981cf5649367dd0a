//go:build !linux

package filestore

import (
	"errors"
	"os"
)

// openAnon reports that unnamed temp files are a Linux feature: elsewhere
// every write uses a named temp file.
func openAnon(*os.File) (*os.File, bool, error) { return nil, false, nil }

func anonPath(f *os.File) string { return f.Name() }

func linkAnon(_, _ *os.File, _ string) error { return errors.ErrUnsupported }

// datasync is fsync where fdatasync is not offered.
func datasync(f *os.File) error { return f.Sync() }
