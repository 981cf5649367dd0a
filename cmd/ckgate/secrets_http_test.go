package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHTTPSinkURLSecretsNeverStored: an http sink URL that carries secrets
// in query parameters no list of secret names would catch (an Azure
// Functions code=, auth=, passwd=, pwd=, jwt=, an unknown x=, a mixed-case
// Code=) and in its fragment (#access_token=) is never written under the
// checkpoint directory (plan.json included) nor printed on stdout or
// stderr, by run (every format, debug logs, succeeding, failing against
// the receiver, against a closed port, restarting with a rotated code),
// inspect and compat. Local disk only: no emulator needed.
func TestHTTPSinkURLSecretsNeverStored(t *testing.T) {
	lc := &leakCheck{secrets: map[string]string{}}
	in, out := t.TempDir(), t.TempDir()
	var status atomic.Int32
	status.Store(http.StatusNoContent)
	base := hookReceiver(t, &status, "")
	query := func(of string) string {
		add := func(what, label string) string { return lc.add(of+": "+what, secret(label)) }
		return "/api/hook?code=" + add("Azure Functions code=", "CODE") + "&x=" + add("x=", "X") +
			"&auth=" + add("auth=", "AUTH") + "&passwd=" + add("passwd=", "PASSWD") + "&pwd=" + add("pwd=", "PWD") +
			"&jwt=" + add("jwt=", "JWT") + "&Code=" + add("Code=", "MIXED") + "#access_token=" + add("fragment", "FRAG")
	}
	hook := base + query("sink URL")
	sinkLine := func(u string) string {
		return fmt.Sprintf("sink: {kind: http, url: '%s', batch_size: 50, timeout: 5s}", u)
	}
	spec := secretsSpec(t, in, "hook", sinkLine(hook))
	ck := filepath.Join(out, "ck")
	debug := []string{"--log-level", "debug"}
	cmd := func(args ...string) []string { return append(append([]string{}, debug...), args...) }

	lc.run(t, "", cmd("run", "--checkpoint", ck, "--batches", "1", "--format", "json", spec)...).want(t, 0)
	lc.run(t, "", cmd("run", "--checkpoint", ck, "--batches", "1", "--format", "text", spec)...).want(t, 0)
	status.Store(http.StatusInternalServerError)
	if r := lc.run(t, "", cmd("run", "--checkpoint", ck, "--available-now", "--format", "text", spec)...); r.code == 0 {
		t.Fatalf("the receiver's failure did not fail the run:\n%s", r.stdout)
	}
	status.Store(http.StatusNoContent)
	lc.run(t, "", cmd("run", "--checkpoint", ck, "--available-now", "--format", "json", spec)...).want(t, 0)

	rotated := secretsSpec(t, in, "hook-rotated", sinkLine(base+query("rotated sink URL")))
	if r := lc.run(t, "", cmd("run", "--checkpoint", ck, "--available-now", rotated)...); r.code == 0 {
		t.Fatal("a restart with another code= ran: the hidden part of the sink URL was not compared")
	} else if !strings.Contains(r.stderr, "hidden part") {
		t.Errorf("the refusal does not say the sink URL differs in a hidden part:\n%s", r.stderr)
	}
	for _, f := range []string{"table", "json"} {
		lc.run(t, "", cmd("inspect", "--format", f, ck)...)
		lc.run(t, "", cmd("compat", "--format", f, "--spec", spec, ck)...)
		lc.run(t, "", cmd("compat", "--format", f, "--spec", rotated, ck)...)
		lc.run(t, "", cmd("compat", "--format", f, "--print-recorded", ck)...)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	dead := secretsSpec(t, in, "dead", sinkLine(closed.URL+query("unreachable sink URL")))
	if r := lc.run(t, "", cmd("run", "--checkpoint", filepath.Join(out, "ck-dead"), "--available-now", dead)...); r.code == 0 {
		t.Fatal("a run against a closed port succeeded")
	}

	lc.scanDir(t, out)
	if lc.files == 0 {
		t.Fatal("no checkpoint file searched")
	}
	for _, h := range lc.hits {
		t.Error(h)
	}
}

// TestHTTPSinkOldPlanRewrittenByRun: a checkpoint whose plan.json was
// written before the allowlist redactor (its http sink URL keeps code=,
// no URL hash) restarts through the CLI's guard, and the run writes the
// plan again without the secret.
func TestHTTPSinkOldPlanRewrittenByRun(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	var status atomic.Int32
	status.Store(http.StatusNoContent)
	base := hookReceiver(t, &status, "")
	code := secret("OLDCODE")
	spec := secretsSpec(t, in, "hook", fmt.Sprintf("sink: {kind: http, url: '%s/api/hook?code=%s', batch_size: 50, timeout: 5s}", base, code))
	ck := filepath.Join(out, "ck")
	ckgate(t, Options{}, "", "run", "--checkpoint", ck, "--batches", "1", spec).want(t, 0)
	planFile := filepath.Join(ck, "_ckgate", "plan.json")
	data, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	p["sink"] = map[string]string{"kind": "http", "url": base + "/api/hook?code=" + code}
	old, _ := json.MarshalIndent(p, "", "  ")
	if err := os.WriteFile(planFile, old, 0o644); err != nil {
		t.Fatal(err)
	}
	r := ckgate(t, Options{}, "", "run", "--checkpoint", ck, "--available-now", spec)
	r.want(t, 0)
	if strings.Contains(r.stdout+r.stderr, code) {
		t.Error("the restart shows the old plan's secret")
	}
	data, err = os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), code) || !strings.Contains(string(data), "url_sha256") {
		t.Errorf("plan.json was not written again without the secret:\n%s", data)
	}
}
