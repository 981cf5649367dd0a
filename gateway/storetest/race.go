package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// Racers is how many goroutines race for one key.
const Racers = 16

type raceResult struct {
	payload []byte
	version gateway.Version
	err     error
}

// race runs write(i) in Racers goroutines released together by closing one
// channel, and returns each result.
func race(write func(i int) raceResult) []raceResult {
	start := make(chan struct{})
	results := make([]raceResult, Racers)
	var wg sync.WaitGroup
	for i := range Racers {
		wg.Go(func() {
			<-start
			results[i] = write(i)
		})
	}
	close(start)
	wg.Wait()
	return results
}

// oneWinner checks that exactly one result succeeded, that every other one
// failed with loserKind, and that key holds the winner's bytes at the
// winner's version.
func oneWinner(t *testing.T, s gateway.Store, key string, results []raceResult, loserKind error) {
	t.Helper()
	winner := -1
	for i, r := range results {
		switch {
		case r.err == nil && winner >= 0:
			t.Errorf("writers %d and %d both won %q", winner, i, key)
		case r.err == nil:
			winner = i
			if r.version == "" {
				t.Errorf("winner %d got an empty version", i)
			}
		default:
			WantKeyKind(t, fmt.Sprintf("writer %d", i), r.err, key, loserKind)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer won %q", key)
	}
	wantObject(t, s, key, results[winner].payload, results[winner].version)
}

// testRaceIfAbsent: of Racers create-only writers of one key, exactly one
// wins and the others get ErrExists. Repeated on a few keys, half of them
// through PutStream.
func testRaceIfAbsent(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	for round := range 3 {
		key := fmt.Sprintf("commits/%d", round)
		results := race(func(i int) raceResult {
			payload := fmt.Appendf(nil, "round %d writer %02d", round, i)
			var v gateway.Version
			var err error
			if i%2 == 0 {
				v, err = s.Put(ctx, key, payload, gateway.IfAbsent())
			} else {
				v, err = s.PutStream(ctx, key, onlyReader{bytes.NewReader(payload)}, gateway.IfAbsent())
			}
			return raceResult{payload, v, err}
		})
		oneWinner(t, s, key, results, gateway.ErrExists)
	}
}

// testRaceCAS: of Racers compare-and-swap writers from the same version,
// exactly one wins and the others get ErrPrecondition.
func testRaceCAS(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	const key = "_ckgate/writer"
	v0 := mustPut(t, s, key, []byte("epoch=0"), gateway.IfAbsent())
	results := race(func(i int) raceResult {
		payload := fmt.Appendf(nil, "epoch=1 owner=%02d", i)
		v, err := s.Put(ctx, key, payload, gateway.IfMatch(v0))
		return raceResult{payload, v, err}
	})
	oneWinner(t, s, key, results, gateway.ErrPrecondition)
}

// testRaceCASCounter: concurrent read-modify-write increments with retry on
// ErrPrecondition lose no update.
func testRaceCASCounter(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	const key, workers, incs, maxTries = "counter", 4, 5, 10000
	mustPut(t, s, key, []byte("0"), gateway.IfAbsent())
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			<-start
			tries := 0
			for done := 0; done < incs; {
				if tries++; tries > maxTries {
					t.Errorf("worker %d: gave up after %d tries", w, maxTries)
					return
				}
				b, v, err := s.Get(ctx, key)
				if err != nil {
					t.Errorf("worker %d: get: %v", w, err)
					return
				}
				n, err := strconv.Atoi(string(b))
				if err != nil {
					t.Errorf("worker %d: counter %q: %v", w, b, err)
					return
				}
				_, err = s.Put(ctx, key, []byte(strconv.Itoa(n+1)), gateway.IfMatch(v))
				switch {
				case err == nil:
					done++
				case errors.Is(err, gateway.ErrPrecondition):
				default:
					t.Errorf("worker %d: CAS: %v", w, err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	wantObject(t, s, key, []byte(strconv.Itoa(workers*incs)), "")
}
