package azstore

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/ckgate/ckgate/gateway"
)

var _ gateway.RangeDriver = (*driver)(nil)

// GetRange reads n bytes of key from off (n < 0: to the end) with one
// ranged Get Blob; the retry reader resumes a broken download inside the
// range with If-Match on the ETag. Size is the blob's, from the
// Content-Range total. Azure refuses a range that starts at or past the
// end with 416 InvalidRange: that is an empty read, with the attributes
// of Get Blob Properties. A zero-length range is Get Blob Properties
// alone.
func (s *driver) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, gateway.Attrs, error) {
	if n == 0 {
		return gateway.EmptyRange(ctx, s.Stat, key)
	}
	resp, err := s.blob(key).DownloadStream(ctx, &blob.DownloadStreamOptions{
		Range: blob.HTTPRange{Offset: off, Count: max(n, 0)},
	})
	if err != nil {
		status, _ := statusOf(err)
		if status == http.StatusRequestedRangeNotSatisfiable || bloberror.HasCode(err, bloberror.InvalidRange) {
			return gateway.EmptyRange(ctx, s.Stat, key)
		}
		return nil, gateway.Attrs{}, e("get", key, err)
	}
	a := gateway.Attrs{Key: key, Version: version(resp.ETag), Modified: deref(resp.LastModified)}
	size, ok := gateway.ContentRangeSize(deref(resp.ContentRange))
	switch {
	case ok:
		a.Size = size
	case off == 0 && n < 0:
		// The whole blob: the SDK sends no Range for it.
		a.Size = deref(resp.ContentLength)
	default:
		resp.Body.Close()
		return nil, gateway.Attrs{}, gateway.E("get", key, gateway.ErrUnavailable,
			fmt.Errorf("a ranged read from byte %d came back without a Content-Range", off))
	}
	body := resp.NewRetryReader(ctx, &blob.RetryReaderOptions{MaxRetries: 3})
	return &reader{rc: body, op: "get", key: key}, a, nil
}
