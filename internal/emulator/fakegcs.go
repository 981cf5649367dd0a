package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// GCSEmulator is a running fake-gcs-server (in-memory backend, plain HTTP).
//
// Point a storage client at it with STORAGE_EMULATOR_HOST=Host (the client
// library then needs no credentials), or with option.WithEndpoint(Endpoint)
// and option.WithoutAuthentication(). The server is started with
// -public-host Host, so the client library's default XML-API reads work.
//
// Known deviation from Cloud Storage: fake-gcs-server ignores generation
// preconditions on object deletes (ifGenerationMatch, ifMetagenerationMatch
// are dropped). Wrap the client's transport with GCSDeleteConditions to get
// the documented behaviour in tests.
type GCSEmulator struct {
	// Host is "127.0.0.1:PORT", the value for STORAGE_EMULATOR_HOST.
	Host string
	// Endpoint is the JSON API root, "http://127.0.0.1:PORT/storage/v1/".
	Endpoint string

	proc *Process
}

// StartFakeGCS starts fake-gcs-server on a free loopback port and waits
// until its health check answers. A missing binary is reported with an
// error wrapping ErrMissing; pass it to Require.
func StartFakeGCS(ctx context.Context) (*GCSEmulator, error) {
	bin, err := Find("fake-gcs-server", "bin/fake-gcs-server")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("fake-gcs-server: pick a port: %w", err)
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	args := []string{
		"-scheme", "http",
		"-host", "127.0.0.1",
		"-port", strconv.Itoa(port),
		"-public-host", host,
		"-external-url", "http://" + host,
		"-backend", "memory",
		"-log-level", "warn",
	}
	health := "http://" + host + "/_internal/healthcheck"
	ready := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, health, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("health check: %s", resp.Status)
		}
		return nil
	}
	// Keep FAKE_GCS_* settings from the environment out of the way: the
	// flags above say everything the tests rely on.
	p, err := Start(ctx, "fake-gcs-server", bin, args, nil, host, "", ready)
	if err != nil {
		return nil, err
	}
	return &GCSEmulator{Host: host, Endpoint: "http://" + host + "/storage/v1/", proc: p}, nil
}

// Stop kills the emulator. It is safe to call more than once.
func (e *GCSEmulator) Stop() {
	if e != nil && e.proc != nil {
		e.proc.Stop()
	}
}

// Logs returns what the emulator printed so far.
func (e *GCSEmulator) Logs() string {
	if e == nil || e.proc == nil {
		return ""
	}
	return e.proc.Logs()
}

// GCSDeleteConditions returns a RoundTripper that makes fake-gcs-server
// honour generation preconditions on object deletes, as Cloud Storage does
// (https://cloud.google.com/storage/docs/request-preconditions): before it
// forwards a DELETE of an object that carries ifGenerationMatch or
// ifMetagenerationMatch, it reads the object's metadata and answers 412
// conditionNotMet itself when a condition fails (404 when the object is
// missing). The check and the delete are two requests, so the shim is not
// atomic under races; it exists so that tests of a backend that sends the
// condition can see the documented outcome. Requests that carry no delete
// precondition pass through untouched. base nil means
// http.DefaultTransport.
func GCSDeleteConditions(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &deleteConditions{base: base}
}

type deleteConditions struct {
	base http.RoundTripper
}

var deleteCondParams = []string{"ifGenerationMatch", "ifGenerationNotMatch", "ifMetagenerationMatch", "ifMetagenerationNotMatch"}

func (d *deleteConditions) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodDelete || !strings.Contains(req.URL.Path, "/o/") {
		return d.base.RoundTrip(req)
	}
	q := req.URL.Query()
	conds := map[string]string{}
	for _, name := range deleteCondParams {
		if v := q.Get(name); v != "" {
			conds[name] = v
		}
	}
	if len(conds) == 0 {
		return d.base.RoundTrip(req)
	}
	u := *req.URL
	mq := u.Query()
	for _, name := range deleteCondParams {
		mq.Del(name)
	}
	mq.Set("alt", "json")
	u.RawQuery = mq.Encode()
	get, err := http.NewRequestWithContext(req.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	get.Header = req.Header.Clone()
	resp, err := d.base.RoundTrip(get)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		if req.Body != nil {
			req.Body.Close()
		}
		return resp, nil // 404 and friends: what the delete would answer
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var meta struct {
		Generation     json.Number `json:"generation"`
		Metageneration json.Number `json:"metageneration"`
	}
	if err := json.Unmarshal(body, &meta); err != nil {
		return nil, fmt.Errorf("fake-gcs-server delete shim: object metadata: %w", err)
	}
	current := map[string]string{
		"ifGenerationMatch":        meta.Generation.String(),
		"ifGenerationNotMatch":     meta.Generation.String(),
		"ifMetagenerationMatch":    meta.Metageneration.String(),
		"ifMetagenerationNotMatch": meta.Metageneration.String(),
	}
	for name, want := range conds {
		equal := want == current[name]
		if strings.HasSuffix(name, "NotMatch") == equal {
			if req.Body != nil {
				req.Body.Close()
			}
			return preconditionFailed(req), nil
		}
	}
	return d.base.RoundTrip(req)
}

func preconditionFailed(req *http.Request) *http.Response {
	body := `{"error":{"code":412,"message":"At least one of the pre-conditions you specified did not hold.",` +
		`"errors":[{"domain":"global","reason":"conditionNotMet","message":"At least one of the pre-conditions you specified did not hold."}]}}`
	return Response(req, http.StatusPreconditionFailed, "application/json; charset=UTF-8", body)
}
