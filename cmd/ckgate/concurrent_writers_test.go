package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/engine/demo"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3store"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/emulator"
)

// TestConcurrentWriters starts 4 `ckgate run` processes at once on one
// checkpoint, round after round, each round after new input files arrived:
// on a new checkpoint, on one a writer released, and with --force (each
// newcomer fences the holder). From what the processes print and what the
// log holds it checks that one process makes progress at a time: each
// process has one epoch, processes that ran batches have distinct epochs,
// a process never reports a batch after a later epoch started on an
// earlier one, offsets/N and commits/N exist once each with writer epochs
// that never go down, and every commit's writer reported that batch. The
// others exit with the conflict status (in use, fenced) or, having waited
// for the lease, find nothing to do. The file sink then holds the
// reference sessions: none lost, none twice.
func TestConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the CLI many times")
	}
	// The processes that wait for the winner's lease take the checkpoint
	// over as soon as the winner releases it on exit, find nothing new and
	// exit; `make soak` runs more rounds.
	rounds, letWait := 4, true
	if n := soakRuns(t, 0); n >= 10 {
		rounds = 8
	}
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		concurrentRounds(t, "local", rounds, letWait, dir, nil, "ck", "out", func(raw string) gateway.Store {
			st, err := stores.Open(context.Background(), filepath.Join(dir, raw))
			if err != nil {
				t.Fatal(err)
			}
			return st
		})
	})
	t.Run("s3", func(t *testing.T) {
		t.Parallel()
		emu, err := emulator.StartVersitygw(startCtx(t))
		emulator.Require(t, err)
		t.Cleanup(emu.Stop)
		none := filepath.Join(t.TempDir(), "none")
		env := []string{"AWS_ACCESS_KEY_ID=" + emu.AccessKey, "AWS_SECRET_ACCESS_KEY=" + emu.SecretKey,
			"AWS_SESSION_TOKEN=", "AWS_PROFILE=", "AWS_CONFIG_FILE=" + none, "AWS_SHARED_CREDENTIALS_FILE=" + none,
			"AWS_EC2_METADATA_DISABLED=true"}
		q := s3Query(emu, emu.Endpoint).Encode()
		b := bucketName()
		dir := t.TempDir()
		mb := startChild(t, dir, env, "store", "mb", "s3://"+b+"?"+q)
		mb.wait(t, time.Minute)
		if mb.code() != 0 {
			t.Fatalf("store mb: exit %d\n%s", mb.code(), mb.output())
		}
		// The test process reads with the emulator's keys given
		// explicitly, so that it needs no environment (t.Parallel).
		client := s3.NewFromConfig(aws.Config{Region: emu.Region,
			Credentials: credentials.NewStaticCredentialsProvider(emu.AccessKey, emu.SecretKey, "")},
			func(o *s3.Options) { o.BaseEndpoint = aws.String(emu.Endpoint); o.UsePathStyle = true })
		concurrentRounds(t, "s3", rounds, letWait, dir, env, "s3://"+b+"/ck?"+q, "s3://"+b+"/out?"+q, func(raw string) gateway.Store {
			return s3store.New(client, b, strings.TrimPrefix(strings.SplitN(raw, "?", 2)[0], "s3://"+b+"/"))
		})
	})
}

const concurrentWriters = 4

// concurrentRounds runs the rounds on the checkpoint ckURL with the file
// sink at outURL; open opens either in the test process. Unless letWait,
// a process waiting for a lease is interrupted once a process that ran
// batches has exited.
func concurrentRounds(t *testing.T, name string, rounds int, letWait bool, dir string, env []string, ckURL, outURL string, open func(string) gateway.Store) {
	src, err := os.ReadFile("../../testdata/specs/clickstream-sessions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	specText := strings.Replace(string(src), "max_files_per_batch: 4", "max_files_per_batch: 1", 1)
	specText = strings.Replace(specText, "path: demo/out/sessions", "path: '"+outURL+"'", 1)
	sp := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(sp, []byte(specText), 0o644); err != nil {
		t.Fatal(err)
	}
	files := demo.Files(demo.Default())
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	in := filepath.Join(dir, "demo", "clickstream")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	want := canonicalRows(t, demoSessions(t, 1, 10*time.Minute, 30*time.Minute))
	ck, out := open(ckURL), open(outURL)

	var conflicts, waited, interrupted, fenced, progressed int
	start := time.Now()
	reported := map[int64][]uint64{} // batch → epochs of the processes that reported it
	for round := range rounds {
		// New input, published atomically (a leading dot hides a file
		// from the source until it is renamed).
		for _, n := range names[round*len(names)/rounds : (round+1)*len(names)/rounds] {
			tmp := filepath.Join(in, "."+n)
			if err := os.WriteFile(tmp, files[n], 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(in, n)); err != nil {
				t.Fatal(err)
			}
		}
		force := round >= 2 && round%2 == 0
		args := []string{"run", "--checkpoint", ckURL, "--available-now", "--format", "json"}
		if force {
			args = append(args, "--force")
		}
		args = append(args, sp)
		cs := make([]*child, concurrentWriters)
		for i := range cs {
			cs[i] = startChild(t, dir, env, args...)
		}
		stopped := awaitRound(t, cs, !force && !letWait)
		interrupted += len(stopped)

		// Each process: exit 0 or the conflict status, one epoch.
		type span struct {
			epoch    uint64
			min, max int64
			c        *child
		}
		var spans []span
		for i, c := range cs {
			out := c.output()
			if strings.Contains(out, leaseWaitMessage) {
				waited++
			}
			switch c.code() {
			case 0:
			case ExitInterrupted:
				if !stopped[i] {
					t.Fatalf("round %d process %d: exit 130 though not interrupted:\n%s", round, i, out)
				}
				if len(c.progressEvents()) > 0 {
					t.Fatalf("round %d process %d: ran batches while another held the checkpoint:\n%s", round, i, out)
				}
			case ExitConflict:
				switch {
				case strings.Contains(out, "fenced"):
					fenced++
				case strings.Contains(out, "in use"):
					conflicts++
				default:
					t.Fatalf("round %d process %d: exit 3 without saying in use or fenced:\n%s", round, i, out)
				}
			default:
				t.Fatalf("round %d process %d: exit %d\n%s", round, i, c.code(), out)
			}
			evs := c.progressEvents()
			if len(evs) == 0 {
				continue
			}
			s := span{epoch: evs[0].Ckgate.Epoch, min: evs[0].BatchID, max: evs[0].BatchID, c: c}
			for _, ev := range evs {
				if ev.Ckgate.Epoch != s.epoch {
					t.Fatalf("round %d process %d reported epochs %d and %d: one process, one session", round, i, s.epoch, ev.Ckgate.Epoch)
				}
				s.min, s.max = min(s.min, ev.BatchID), max(s.max, ev.BatchID)
				reported[ev.BatchID] = append(reported[ev.BatchID], ev.Ckgate.Epoch)
			}
			spans = append(spans, s)
		}
		if len(spans) == 0 {
			t.Fatalf("round %d: no process made progress", round)
		}
		if !force && len(spans) != 1 {
			t.Fatalf("round %d: %d processes ran batches at once without --force", round, len(spans))
		}
		progressed += len(spans)
		// One at a time: ordered by epoch, a process's batches never go
		// beyond where its successor began (it may have finished the batch
		// its successor then re-ran and adopted).
		sort.Slice(spans, func(i, j int) bool { return spans[i].epoch < spans[j].epoch })
		for i := 1; i < len(spans); i++ {
			p, q := spans[i-1], spans[i]
			if p.epoch == q.epoch {
				t.Fatalf("round %d: two processes ran batches with epoch %d", round, p.epoch)
			}
			if p.max > q.min {
				t.Fatalf("round %d: epoch %d reported batches %d-%d, after epoch %d had begun at batch %d\n%s\n%s",
					round, p.epoch, p.min, p.max, q.epoch, q.min, p.c.output(), q.c.output())
			}
		}

		// The log: no gap, no double entry, epochs never down, and each
		// commit's writer reported its batch.
		checkLog(t, ck, true)
		for batch := int64(0); ; batch++ {
			data, _, err := ck.Get(context.Background(), fmt.Sprintf("commits/%d", batch))
			if err != nil {
				break
			}
			e, err := gateway.EntryEpoch("commits", data)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(reported[batch], e) {
				t.Fatalf("round %d: commits/%d has epoch %d, but the processes of that epoch did not report it (reported by %v)",
					round, batch, e, reported[batch])
			}
			for _, r := range reported[batch] {
				if r < e {
					t.Fatalf("round %d: batch %d reported by epoch %d, older than its commit's %d", round, batch, r, e)
				}
			}
		}
		got := canonicalRows(t, fileSinkRows(t, out))
		if _, dup := compareRows(got, want); dup > 0 {
			t.Fatalf("round %d: the sink holds %d rows twice (or rows the reference lacks)", round, dup)
		}
	}
	got := canonicalRows(t, fileSinkRows(t, out))
	lost, dup := compareRows(got, want)
	t.Logf("soak: concurrent writers %s: rounds=%d processes=%d progressed=%d in-use=%d fenced=%d waited=%d interrupted=%d lost=%d duplicated=%d (%s)",
		name, rounds, rounds*concurrentWriters, progressed, conflicts, fenced, waited, interrupted, lost, dup, time.Since(start).Round(time.Second))
	soakReport(t, "test", "ConcurrentWriters", "cell", name, "rounds", rounds, "processes", rounds*concurrentWriters,
		"progressed", progressed, "in_use", conflicts, "fenced", fenced, "waited", waited, "interrupted", interrupted,
		"lost", lost, "duplicated", dup, "seconds", int(time.Since(start).Seconds()))
	if lost+dup > 0 {
		t.Fatalf("after %d rounds the sink lost %d sessions and holds %d twice", rounds, lost, dup)
	}
}

// awaitRound waits for every process of a round. With interrupt, once a
// process that ran batches has exited, every process that waits (or later
// starts waiting) for a writer's lease gets SIGINT; it returns those.
func awaitRound(t *testing.T, cs []*child, interrupt bool) map[int]bool {
	t.Helper()
	exits, waits := make(chan int, len(cs)), make(chan int, len(cs))
	for i, c := range cs {
		go func() { <-c.exited; exits <- i }()
		go func() {
			select {
			case <-c.waiting:
				waits <- i
			case <-c.exited:
			}
		}()
	}
	timeout := time.NewTimer(5 * time.Minute)
	defer timeout.Stop()
	stopped, waiting, exited := map[int]bool{}, map[int]bool{}, map[int]bool{}
	winnerDone := false
	stop := func(i int) {
		if interrupt && winnerDone && waiting[i] && !exited[i] && !stopped[i] {
			stopped[i] = true
			_ = cs[i].cmd.Process.Signal(os.Interrupt)
		}
	}
	for len(exited) < len(cs) {
		select {
		case i := <-exits:
			exited[i] = true
			if cs[i].code() == 0 && len(cs[i].progressEvents()) > 0 {
				winnerDone = true
				for j := range cs {
					stop(j)
				}
			}
		case i := <-waits:
			waiting[i] = true
			stop(i)
		case <-timeout.C:
			for _, c := range cs {
				c.kill()
			}
			t.Fatal("a round did not end within 5 minutes")
		}
	}
	return stopped
}
