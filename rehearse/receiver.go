package rehearse

import (
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ckgate/ckgate/engine/sink"
)

// Receiver is an in-process HTTP endpoint that stands in for the
// production endpoint of an http sink. It applies each record once per
// idempotency key, as an idempotent receiver must, and counts what it saw:
// deliveries, redeliveries of a known key (recognised, not applied again)
// and conflicts (a known key with another record).
type Receiver struct {
	URL string

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	effects  map[string]string // key → canonical record, first delivery
	order    []string
	posts    int
	records  int
	redeliv  int
	conflict int
	failed   int
	failRate float64
	rng      *rand.Rand
}

// ReceiverStats are a receiver's counters.
type ReceiverStats struct {
	Posts, Records, Effects, Redelivered, Conflicts, Failed int
}

// NewReceiver listens on a free loopback port. With failRate > 0 that share
// of requests is applied and then answered 503 (the sender cannot tell
// whether it happened), drawn from a generator seeded with seed.
func NewReceiver(failRate float64, seed uint64) (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{ln: ln, URL: "http://" + ln.Addr().String() + "/effects", effects: map[string]string{},
		failRate: failRate, rng: rand.New(rand.NewPCG(seed, 0x72656376))}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

// Close stops the receiver.
func (r *Receiver) Close() error {
	err := r.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var b sink.HTTPRequest
	if err := json.Unmarshal(data, &b); err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.posts++
	for _, rec := range b.Records {
		r.records++
		c, _, err := canonicalRow(rec.Record, nil)
		if err != nil {
			c = string(rec.Record)
		}
		if old, ok := r.effects[rec.Key]; ok {
			r.redeliv++
			if old != c {
				r.conflict++
			}
			continue
		}
		r.effects[rec.Key] = c
		r.order = append(r.order, rec.Key)
	}
	fail := r.failRate > 0 && r.rng.Float64() < r.failRate
	if fail {
		r.failed++
	}
	r.mu.Unlock()
	if fail {
		http.Error(w, "injected failure after applying the records", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// Rows returns the applied records (one per idempotency key), sorted by key.
func (r *Receiver) Rows() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := append([]string{}, r.order...)
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = r.effects[k]
	}
	return out
}

// Stats returns the receiver's counters.
func (r *Receiver) Stats() ReceiverStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ReceiverStats{Posts: r.posts, Records: r.records, Effects: len(r.effects), Redelivered: r.redeliv,
		Conflicts: r.conflict, Failed: r.failed}
}

// batchEffects counts the applied records of batch (keys <query>/<batch>/<record>).
func (r *Receiver) batchEffects(batch int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, k := range r.order {
		parts := strings.Split(k, "/")
		if len(parts) >= 3 && parts[len(parts)-2] == strconv.FormatInt(batch, 10) {
			n++
		}
	}
	return n
}
