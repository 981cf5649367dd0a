package gcsstore

import (
	"context"
	"errors"
	"io"
	"net/http"

	"google.golang.org/api/googleapi"

	"github.com/ckgate/ckgate/gateway"
)

var _ gateway.RangeDriver = (*driver)(nil)

// GetRange reads n bytes of name from off (n < 0: to the end) with one
// ranged read (NewRangeReader); the library pins the generation when it
// resumes. Size is the object's. GCS refuses a range that starts at or
// past the end with 416: that is an empty read, with the attributes of a
// metadata read. A zero-length range is a metadata read alone.
func (d *driver) GetRange(ctx context.Context, name string, off, n int64) (io.ReadCloser, gateway.Attrs, error) {
	if n == 0 {
		return gateway.EmptyRange(ctx, d.Stat, name)
	}
	r, err := d.bucket.Object(name).NewRangeReader(ctx, off, max(n, -1))
	if err != nil {
		var ge *googleapi.Error
		if errors.As(err, &ge) && ge.Code == http.StatusRequestedRangeNotSatisfiable {
			return gateway.EmptyRange(ctx, d.Stat, name)
		}
		return nil, gateway.Attrs{}, named(ctx, err)
	}
	a := gateway.Attrs{Size: r.Attrs.Size, Version: version(r.Attrs.Generation), Modified: r.Attrs.LastModified}
	return &reader{ctx: ctx, r: r}, a, nil
}
