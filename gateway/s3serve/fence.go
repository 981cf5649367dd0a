package s3serve

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/ckgate/ckgate/gateway"
)

// maxReferer bounds the Referer header read for the process id.
const maxReferer = 8 << 10

// referrerProcess is the client process a request names: the `ps` field of
// S3A's audit referrer (fs.s3a.audit.enabled; a Referer header such as
// https://audit.example.org/hadoop/1/op_create/SPAN/?op=op_create&…&ps=PROCESS&…),
// or "" when the request carries none.
func referrerProcess(ctx context.Context) string {
	rc, ok := ctx.(*fasthttp.RequestCtx)
	if !ok {
		return ""
	}
	ref := rc.Request.Header.Referer()
	if len(ref) == 0 || len(ref) > maxReferer {
		return ""
	}
	u, err := url.Parse(string(ref))
	if err != nil {
		return ""
	}
	ps := u.Query().Get("ps")
	if len(ps) > 128 || strings.ContainsFunc(ps, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return "" // not a process id: ignored, never stored
	}
	return ps
}

// committed records, after a successful write of a root's commits/N, that
// the request's process committed batch N (gateway.RecordCommit): the
// process it replaces is fenced from then on. A failure to record leaves
// fencing a batch behind; the commit itself stands.
func (b *storeBackend) committed(ctx context.Context, bucket, key string) {
	process := gateway.WriterProcess(ctx)
	dir, name, ok := cutLast(key)
	if process == "" || !ok {
		return
	}
	root, logDir, ok := cutLast(dir)
	if !ok || logDir != "commits" || !gateway.AllDigits(name) {
		return
	}
	n, err := strconv.ParseInt(name, 10, 64)
	if err != nil {
		return
	}
	if err := gateway.RecordCommit(ctx, b.raw, objectKey(bucket, root), process, n); err != nil {
		gateway.LoggerFrom(ctx).Warn("recording the committer of a batch", "key", objectKey(bucket, key), "err", err)
	}
}

// cutLast splits a key at its last '/'.
func cutLast(key string) (dir, name string, ok bool) {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return "", key, false
	}
	return key[:i], key[i+1:], true
}
