package s3store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
)

var _ gateway.PageDriver = (*driver)(nil)

// maxListKeys is the most entries one ListObjectsV2 answers.
const maxListKeys = 1000

// ListPage lists one page with one ListObjectsV2 (Prefix, Delimiter,
// StartAfter, MaxKeys), which counts keys and common prefixes together as
// the contract does. It asks for one entry more than max: a page that ends
// on a common prefix is continued from that prefix, which a service may
// report once more (its keys sort after it; the page leaves it out, as it
// leaves out a prefix that holds after), and the extra entry keeps the
// next page full. Only when a whole answer holds nothing for the page
// (directory markers, that one prefix) does it ask again, from where the
// answer ended. max is capped at S3's 1,000.
func (s *driver) ListPage(ctx context.Context, prefix, delim, after string, max int) (gateway.Page, error) {
	max = min(max, maxListKeys-1)
	pc := gateway.NewPageCollector(prefix, delim, after, max)
	if pc.Past() {
		return pc.Page(false), nil
	}
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket, MaxKeys: aws.Int32(int32(max + 1))}
	if prefix != "" {
		in.Prefix = aws.String(prefix)
	}
	if delim != "" {
		in.Delimiter = aws.String(delim)
	}
	if after != "" {
		in.StartAfter = aws.String(after)
	}
	for {
		var t tracker
		out, err := s.client.ListObjectsV2(ctx, in, t.option)
		if err != nil {
			return gateway.Page{}, fail("list", prefix, err)
		}
		for _, o := range out.Contents {
			pc.Object(gateway.Attrs{
				Key:      aws.ToString(o.Key),
				Size:     aws.ToInt64(o.Size),
				Version:  version(o.ETag),
				Modified: aws.ToTime(o.LastModified),
			})
		}
		for _, cp := range out.CommonPrefixes {
			pc.Prefix(aws.ToString(cp.Prefix))
		}
		more := aws.ToBool(out.IsTruncated)
		if pc.Len() > 0 || !more || out.NextContinuationToken == nil {
			return pc.Page(more), nil
		}
		in.StartAfter, in.ContinuationToken = nil, out.NextContinuationToken
	}
}
