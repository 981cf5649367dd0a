package s3store

import (
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/internal/emulator"
)

// faultTransport passes requests to the real transport, except the first
// n that match, which it hands to fault instead.
type faultTransport struct {
	match func(*http.Request) bool
	fault func(*http.Request) (*http.Response, error)

	mu      sync.Mutex
	n       int // faults left
	matched int // matching requests seen
}

func (f *faultTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !f.match(r) {
		return http.DefaultTransport.RoundTrip(r)
	}
	f.mu.Lock()
	f.matched++
	inject := f.n > 0
	if inject {
		f.n--
	}
	f.mu.Unlock()
	if inject {
		return f.fault(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Matched returns how many requests matched.
func (f *faultTransport) Matched() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.matched
}

// option installs f as the client's HTTP client.
func (f *faultTransport) option(o *s3.Options) {
	o.HTTPClient = &http.Client{Transport: f}
}

// timeoutError is what a client sees when an answer does not come in time.
type timeoutError struct{}

func (timeoutError) Error() string   { return "read tcp: i/o timeout (injected)" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// lostAnswer performs the request, throws the answer away and reports a
// timeout: the write happened, the client cannot know it.
func lostAnswer(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, timeoutError{}
}

// answer returns a fault that answers with an S3 error without sending the
// request.
func answer(status int, code string) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		body := `<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + code +
			`</Code><Message>injected</Message><RequestId>test</RequestId></Error>`
		return emulator.Response(r, status, "application/xml", body), nil
	}
}

// isObjectPut matches PutObject (not UploadPart, not CreateBucket).
func isObjectPut(r *http.Request) bool {
	q := r.URL.Query()
	return r.Method == http.MethodPut && strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1 &&
		!q.Has("uploadId") && !q.Has("partNumber")
}

// isComplete matches CompleteMultipartUpload.
func isComplete(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Query().Has("uploadId")
}

// isObjectDelete matches DeleteObject.
func isObjectDelete(r *http.Request) bool {
	return r.Method == http.MethodDelete && !r.URL.Query().Has("uploadId")
}

// isObjectGet matches GetObject.
func isObjectGet(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1
}
