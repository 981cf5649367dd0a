package s3atrace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// createAtomic is CheckpointFileManager.createAtomic(key, overwrite) and
// the close that publishes it, as the driver's manager sends it.
func (d *Driver) createAtomic(batch int64, key string, body []byte, overwrite bool) []Step {
	step := func(k Kind, name string, do func(ctx context.Context) error) Step {
		return Step{Name: fmt.Sprintf("%s: %s", batchName(batch), name), Batch: batch, Kind: k, Key: key, Group: key, Do: do}
	}
	probe := step(Probe, "HEAD + LIST "+key, func(ctx context.Context) error {
		return d.probe(ctx, key, overwrite, false)
	})
	if d.Manager == Abortable {
		put := step(Put, "PUT "+key, func(ctx context.Context) error {
			in := &s3.PutObjectInput{Bucket: &d.Bucket, Key: aws.String(key), Body: bytes.NewReader(body)}
			if !overwrite {
				in.IfNoneMatch = aws.String("*") // fs.s3a.create.conditional.enabled
			}
			_, err := d.Client.PutObject(ctx, in, d.opts("op_create", key)...)
			return err
		})
		return []Step{probe, put}
	}
	dir, name := path.Split(key)
	id := UUID()
	if d.Temp != nil {
		id = d.Temp()
	}
	tmp := dir + "." + name + "." + id + ".tmp"
	var etag *string
	putTemp := step(PutTemp, "PUT "+tmp, func(ctx context.Context) error {
		out, err := d.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: &d.Bucket, Key: aws.String(tmp), Body: bytes.NewReader(body)}, d.opts("op_create", tmp)...)
		if err == nil {
			etag = out.ETag
		}
		return err
	})
	putTemp.Key = tmp
	renameProbe := step(Probe, "HEAD + LIST "+key+" (rename's destination)", func(ctx context.Context) error {
		return d.probe(ctx, key, overwrite, true)
	})
	cp := step(Copy, "COPY "+tmp+" → "+key, func(ctx context.Context) error {
		_, err := d.Client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &d.Bucket, Key: aws.String(key),
			CopySource: aws.String(d.Bucket + "/" + tmp), CopySourceIfMatch: etag}, d.opts("op_rename", key)...)
		return err
	})
	del := step(DeleteTemp, "DELETE "+tmp, func(ctx context.Context) error {
		_, err := d.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &d.Bucket, Key: aws.String(tmp)}, d.opts("op_delete", tmp)...)
		return err
	})
	del.Key, del.Always = tmp, true
	return []Step{probe, putTemp, renameProbe, cp, del}
}

// Create is CheckpointFileManager.createAtomic(key, overwrite=false) of
// key (relative to the root) and its close, as the driver's manager sends
// them: how a log entry is written.
func (d *Driver) Create(key string, body []byte) []Step {
	return d.createAtomic(-1, d.key(key), body, false)
}

// probe is S3A's getFileStatus on key: HEAD key, then LIST key/ (a
// directory). A log entry found is ErrExists; for an overwritable file
// the rename deletes an existing destination first (Hadoop's rename with
// OVERWRITE).
func (d *Driver) probe(ctx context.Context, key string, overwrite, rename bool) error {
	exists, err := d.exists(ctx, key)
	if err != nil || !exists {
		return err
	}
	if !overwrite {
		return fmt.Errorf("%s: %w", key, ErrExists)
	}
	if rename {
		_, err := d.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &d.Bucket, Key: aws.String(key)}, d.opts("op_rename", key)...)
		return err
	}
	return nil
}

// exists is HEAD key + LIST key/ (S3A's file and directory probes).
func (d *Driver) exists(ctx context.Context, key string) (bool, error) {
	_, err := d.Client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &d.Bucket, Key: aws.String(key)}, d.opts("op_exists", key)...)
	if err == nil {
		return true, nil
	}
	if StatusCode(err) != http.StatusNotFound {
		return false, err
	}
	l, err := d.Client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &d.Bucket, Prefix: aws.String(key + "/"), Delimiter: aws.String("/"),
		MaxKeys: aws.Int32(2)}, d.opts("op_exists", key)...)
	if err != nil {
		return false, err
	}
	return len(l.Contents)+len(l.CommonPrefixes) > 0, nil
}

// upload is S3A's copyFromLocalFile of a file large enough for a
// multipart upload (RocksDB's SSTs): create and parts, then complete.
func (d *Driver) upload(batch int64, key string, body []byte) []Step {
	var id *string
	var parts []types.CompletedPart
	up := Step{Name: fmt.Sprintf("%s: multipart upload %s", batchName(batch), key), Batch: batch, Kind: Multipart, Key: key, Group: key,
		Do: func(ctx context.Context) error {
			parts = nil
			cr, err := d.Client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &d.Bucket, Key: aws.String(key)}, d.opts("op_copy_from_local_file", key)...)
			if err != nil {
				return err
			}
			id = cr.UploadId
			size := d.PartSize
			if size <= 0 {
				size = max(len(body), 1)
			}
			for n, off := int32(1), 0; off < len(body) || n == 1; n, off = n+1, off+size {
				chunk := body[off:min(off+size, len(body))]
				p, err := d.Client.UploadPart(ctx, &s3.UploadPartInput{Bucket: &d.Bucket, Key: aws.String(key), UploadId: id,
					PartNumber: aws.Int32(n), Body: bytes.NewReader(chunk)}, d.opts("op_copy_from_local_file", key)...)
				if err != nil {
					return err
				}
				parts = append(parts, types.CompletedPart{ETag: p.ETag, PartNumber: aws.Int32(n)})
			}
			return nil
		}}
	done := Step{Name: fmt.Sprintf("%s: CompleteMultipartUpload %s", batchName(batch), key), Batch: batch, Kind: Complete, Key: key, Group: key,
		Do: func(ctx context.Context) error {
			_, err := d.Client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &d.Bucket, Key: aws.String(key), UploadId: id,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}, d.opts("op_copy_from_local_file", key)...)
			return err
		}}
	return []Step{up, done}
}

// StatusCode is the HTTP status of an S3 error (0 when it has none).
func StatusCode(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func batchName(batch int64) string {
	if batch < 0 {
		return "start"
	}
	return fmt.Sprintf("batch %d", batch)
}
