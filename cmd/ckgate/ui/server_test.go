package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func get(t *testing.T, ts *httptest.Server, path, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServerRefusesRebindingHosts: a page on another origin whose name
// resolves to 127.0.0.1 sends its own Host; the server must not answer it.
func TestServerRefusesRebindingHosts(t *testing.T) {
	dir := sparkFleet(t, sparkNames[0])
	ts := serve(t, fileRoot(t, dir))
	_, port, _ := strings.Cut(strings.TrimPrefix(ts.URL, "http://"), ":")
	for _, h := range []string{"evil.example:" + port, "evil.example", "127.0.0.1", "127.0.0.1:1", "localhost.evil.example:" + port, "127.0.0.1:" + port + ".evil.example"} {
		code, body := get(t, ts, "/", h)
		if code != http.StatusForbidden || !strings.Contains(body, "Host") {
			t.Errorf("Host %q: %d %q, want 403", h, code, body)
		}
	}
	for _, h := range []string{"", "localhost:" + port, "LOCALHOST:" + port, "127.0.0.1:" + port} {
		if code, body := get(t, ts, "/", h); code != http.StatusOK || !strings.Contains(body, "session-window") {
			t.Errorf("Host %q: %d, want the fleet page", h, code)
		}
	}
}

// TestServerOnlyUnderRoots: /c?url= must name a served root or a location
// under one; anything else is 403 naming it, however it is spelled.
func TestServerOnlyUnderRoots(t *testing.T) {
	base := t.TempDir()
	served := filepath.Join(base, "served")
	other := filepath.Join(base, "other")
	for _, d := range []string{served, other} {
		if err := os.CopyFS(filepath.Join(d, "cp"), os.DirFS(filepath.Join("..", "..", "..", "testdata", "spark", sparkNames[0]))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(other, "cp"), filepath.Join(served, "link")); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, fileRoot(t, served))
	for _, u := range []string{
		other + "/cp", "file://" + other + "/cp", served + "/../other/cp", "file://" + served + "/%2e%2e/other/cp",
		served + "/link", "s3://bucket/cp", base, "/", served + "x/cp",
	} {
		code, body := get(t, ts, "/c?url="+url.QueryEscape(u), "")
		if code != http.StatusForbidden || !strings.Contains(body, "outside the served roots") {
			t.Errorf("url %q: %d %q, want 403", u, code, body)
		}
	}
	for _, u := range []string{served + "/cp", "file://" + served + "/cp/", served + "//cp", served + "/./cp"} {
		code, body := get(t, ts, "/c?url="+url.QueryEscape(u), "")
		if code != http.StatusOK || !strings.Contains(body, "clean") {
			t.Errorf("url %q: %d, want its page:\n%.300s", u, code, body)
		}
	}
	if code, _ := get(t, ts, "/c", ""); code != http.StatusBadRequest {
		t.Errorf("/c without url: %d", code)
	}
}

// TestServerLocalClientsOnly: a request from another machine is refused
// even with the right Host.
func TestServerLocalClientsOnly(t *testing.T) {
	s := &Server{Loader: &Loader{Roots: []Root{fileRoot(t, sparkFleet(t, sparkNames[0]))}}, Hosts: []string{"127.0.0.1:8080"}}
	for _, remote := range []string{"192.0.2.7:5000", "[2001:db8::1]:5000", "garbage"} {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/", nil)
		req.RemoteAddr = remote
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "local clients only") {
			t.Errorf("from %s: %d %q", remote, rec.Code, rec.Body.String())
		}
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/", nil)
	req.RemoteAddr = "127.0.0.1:5000"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}
