package emulator

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Response is a complete HTTP/1.1 answer to req with status, a
// Content-Type header of contentType and body, as a service sends it: what
// a RoundTripper standing in for the service returns without sending req.
func Response(req *http.Request, status int, contentType, body string) *http.Response {
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {contentType}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
