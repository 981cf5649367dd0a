package main

import (
	"fmt"
	"io"

	"github.com/ckgate/ckgate/internal/output"
)

// Rendering helpers shared by the report commands.

// render writes a command's report v to w: as JSON when format is "json",
// else as table renders it for a person.
func render(w io.Writer, format string, v any, table func() error) error {
	if format == "json" {
		return output.JSON(w, v)
	}
	return table()
}

// bytesText formats n bytes with a binary unit.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
