package output

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSON writes v as one JSON document indented by two spaces, and a
// newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
