package rehearse

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// drillHost is the host name of every drill process: restarts on the same
// host take a crashed writer's checkpoint over at once.
const drillHost = "ckgate-rehearse"

// drill is one scenario's isolated world: its checkpoint and sink under
// the work directory, and the processes (engine.Query instances) that run
// on them, each with its own pid.
type drill struct {
	r     *rehearsal
	name  string
	dir   string
	spec  *spec.Spec
	input string
	cpDir string
	cp    gateway.Store
	sink  gateway.Store                     // files sink
	recv  *Receiver                         // http sink
	retry int                               // attempts of the SDK-like retry layer; 0: none
	view  func(gateway.Store) gateway.Store // when set, what of the input the drill sees
	owned []gateway.Store                   // stores the drill opened, closed by close

	mu     sync.Mutex
	panics []string // engine panics, each treated as a process crash
	pid    int
	alive  map[int]bool
	last   map[int64]engine.Progress // the last progress of each batch id
}

// newDrill makes the drill's directories; input is the URL it reads.
func (r *rehearsal) newDrill(name, input string, recvFail float64) (*drill, error) {
	d := &drill{r: r, name: name, dir: filepath.Join(r.workdir, name), input: input, alive: map[int]bool{},
		last: map[int64]engine.Progress{}}
	d.cpDir = filepath.Join(d.dir, "checkpoint")
	var err error
	if d.cp, err = d.dirStore(d.cpDir); err != nil {
		return nil, err
	}
	s := *r.base
	s.Source.Path = input
	switch s.Sink.Kind {
	case spec.SinkFiles:
		p := filepath.Join(d.dir, "sink")
		if d.sink, err = d.dirStore(p); err != nil {
			return nil, err
		}
		s.Sink.Path = p
	case spec.SinkHTTP:
		if d.recv, err = NewReceiver(recvFail, r.opts.Seed); err != nil {
			return nil, err
		}
		s.Sink.URL = d.recv.URL
		s.Sink.Headers = nil // the production endpoint's credentials stay out of the drill
	}
	d.spec = &s
	return d, nil
}

// dirStore makes dir and opens it; close closes it.
func (d *drill) dirStore(dir string) (gateway.Store, error) {
	st, err := newDirStore(dir)
	if err == nil {
		d.owned = append(d.owned, st)
	}
	return st, err
}

func (d *drill) close() {
	if d.recv != nil {
		d.recv.Close()
	}
	for _, st := range d.owned {
		gateway.Close(st)
	}
}

func (d *drill) isAlive(pid int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.alive[pid]
}

// kill marks pid dead, as a crashed process is, and closes its query
// (which cannot write any more: its store crashed or it was fenced).
func (d *drill) kill(q *engine.Query, pid int) {
	d.mu.Lock()
	d.alive[pid] = false
	d.mu.Unlock()
	if q != nil {
		defer func() {
			if p := recover(); p != nil {
				var err error
				d.recovered("engine.Query.Close", p, &err)
			}
		}()
		_ = q.Close(context.Background())
	}
}

// open starts a new process on the drill's checkpoint: faults (may be nil)
// wrap every store it opens, hook (may be nil) sees its checkpoint requests.
func (d *drill) open(ctx context.Context, faults *gateway.Faults, mode gateway.TakeOver, hook gateway.Interceptor) (*engine.Query, int, error) {
	d.mu.Lock()
	d.pid++
	pid := d.pid
	d.alive[pid] = true
	d.mu.Unlock()
	wrap := func(s gateway.Store) gateway.Store {
		if faults != nil {
			s = faults.Wrap(s)
		}
		if d.retry > 0 {
			s = withRetry(s, d.retry)
		}
		return s
	}
	cp := wrap(d.cp)
	if hook != nil {
		cp = gateway.Intercept(cp, hook)
	}
	reg := wrapRegistry(d.r.opts.Registry, func(u *url.URL, s gateway.Store) gateway.Store {
		if strings.TrimSuffix(u.String(), "/") == strings.TrimSuffix(d.input, "/") {
			s = readOnly(s) // the input is only read, whoever else reads it
			if d.view != nil {
				s = d.view(s)
			}
		}
		return wrap(s)
	})
	q, err := d.safeOpen(ctx, engine.Options{Checkpoint: cp, CheckpointURL: d.cpDir, Registry: reg,
		BaseDir: d.r.opts.BaseDir, Logger: d.r.log,
		Session: gateway.SessionOptions{Principal: "ckgate-rehearse", Host: drillHost, PID: pid, Heartbeat: -1,
			TakeOver: mode, ProcessAlive: d.isAlive}})
	if err != nil {
		d.kill(nil, pid)
		return nil, pid, err
	}
	return q, pid, nil
}

// ErrPanic marks an engine panic that a drill turned into an error: in
// production the process would have crashed there.
var ErrPanic = errors.New("engine panic (the process would crash)")

// recovered turns a panic into an ErrPanic error and remembers it.
func (d *drill) recovered(where string, p any, err *error) {
	msg := fmt.Sprintf("%s: %v", where, p)
	d.mu.Lock()
	d.panics = append(d.panics, msg)
	d.mu.Unlock()
	*err = fmt.Errorf("%w: %s", ErrPanic, msg)
}

func (d *drill) safeOpen(ctx context.Context, o engine.Options) (q *engine.Query, err error) {
	defer func() {
		if p := recover(); p != nil {
			q = nil
			d.recovered("engine.Open", p, &err)
		}
	}()
	return engine.Open(ctx, d.spec, o)
}

func (d *drill) record(p engine.Progress) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.last[p.BatchID] = p
}

// run runs q until the source has nothing new (or max batches, when > 0).
func (d *drill) run(ctx context.Context, q *engine.Query, max int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			d.recovered("engine.Query.Run", p, &err)
		}
	}()
	return q.Run(ctx, engine.Trigger{AvailableNow: max == 0, MaxBatches: max}, d.record)
}

// step runs one batch of q.
func (d *drill) step(ctx context.Context, q *engine.Query) (engine.Progress, bool, error) {
	p, did, err := q.RunBatch(ctx)
	if did && err == nil {
		d.record(p)
	}
	return p, did, err
}

// stateRows is the state held after batch (the latest batch when < 0).
func (d *drill) stateRows(batch int64) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if batch < 0 {
		for b := range d.last {
			batch = max(batch, b)
		}
	}
	return stateRows(d.last[batch])
}

func stateRows(p engine.Progress) int64 {
	var n int64
	for _, o := range p.StateOperators {
		n += o.NumRowsTotal
	}
	return n
}

// output returns the drill's business effects: the rows its files sink's
// manifest names, or the records its receiver applied.
func (d *drill) output(ctx context.Context) ([]string, error) {
	if d.r.opts.BeforeReconcile != nil {
		if err := d.r.opts.BeforeReconcile(ctx, d.name, d.sink); err != nil {
			return nil, err
		}
	}
	if d.recv != nil {
		return d.recv.Rows(), nil
	}
	return ReadFileSink(ctx, d.sink)
}

// finish reconciles the drill with ref and fills res; checks are the
// scenario's own findings so far (an empty string passes).
func (d *drill) finish(ctx context.Context, ref *refRun, res *Result, notes []string, failures []string) {
	rows, err := d.output(ctx)
	if err != nil {
		failures = append(failures, "reading the drill's sink: "+err.Error())
	}
	diff, err := Reconcile(ref.rows, rows, d.r.keyCols)
	if err != nil {
		failures = append(failures, "reconciliation: "+err.Error())
	}
	res.RowsOut = int64(len(rows))
	res.Lost, res.Duplicated = diff.Lost, diff.Duplicated
	d.mu.Lock()
	var late int64
	for _, p := range d.last {
		res.RowsIn += p.NumInputRows
		late += p.Ckgate.LateRowsDropped
	}
	d.mu.Unlock()
	res.LateDropped = late
	res.LateAccepted = ref.plan.LateAccepted
	res.StateRowsAfter = d.stateRows(-1)
	if !diff.OK() {
		failures = append(failures, diff.String())
	}
	if late != ref.late {
		failures = append(failures, fmt.Sprintf("late rows dropped: %d, the reference %d", late, ref.late))
	}
	if res.StateRowsAfter != ref.stateRows {
		failures = append(failures, fmt.Sprintf("state rows at the end: %d, the reference %d", res.StateRowsAfter, ref.stateRows))
	}
	if res.RowsIn != ref.rowsIn {
		failures = append(failures, fmt.Sprintf("rows in: %d, the reference %d", res.RowsIn, ref.rowsIn))
	}
	if n, err := checkLog(ctx, d.cp); err != nil {
		failures = append(failures, err.Error())
	} else {
		notes = append(notes, fmt.Sprintf("log offsets/0-%d and commits/0-%d complete, epochs never go back", n-1, n-1))
	}
	if len(d.panics) > 0 {
		times := "once"
		if len(d.panics) > 1 {
			times = fmt.Sprintf("%d times", len(d.panics))
		}
		notes = append(notes, fmt.Sprintf("the engine panicked %s, handled as a process crash and restart (first: %s)", times, d.panics[0]))
	}
	if d.recv != nil {
		st := d.recv.Stats()
		if st.Conflicts > 0 {
			failures = append(failures, fmt.Sprintf("%d records re-sent under a known idempotency key with other content", st.Conflicts))
		}
		msg := fmt.Sprintf("receiver: %d POSTs, %d records, %d effects, %d re-deliveries recognised by key", st.Posts, st.Records, st.Effects, st.Redelivered)
		if st.Failed > 0 {
			msg += fmt.Sprintf(", %d POSTs answered 503 after applying them", st.Failed)
		}
		notes = append(notes, msg)
	}
	if diff.OK() {
		notes = append(notes, diff.String())
	}
	res.OK = len(failures) == 0
	res.Detail = strings.Join(append(failures, notes...), "; ")
}

// checkLog checks that offsets/ and commits/ both hold 0..N-1 without a
// gap, and that the writer epoch of the commits never goes back. It
// returns N.
func checkLog(ctx context.Context, cp gateway.Store) (int64, error) {
	ids := func(dir string) ([]int64, error) {
		var out []int64
		for a, err := range cp.List(ctx, dir+"/") {
			if err != nil {
				return nil, err
			}
			name := strings.TrimPrefix(a.Key, dir+"/")
			if n, err := strconv.ParseInt(name, 10, 64); err == nil && !strings.Contains(name, "/") {
				out = append(out, n)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out, nil
	}
	offs, err := ids(checkpoint.OffsetsDir)
	if err != nil {
		return 0, fmt.Errorf("list offsets: %w", err)
	}
	commits, err := ids(checkpoint.CommitsDir)
	if err != nil {
		return 0, fmt.Errorf("list commits: %w", err)
	}
	for i, n := range offs {
		if n != int64(i) {
			return 0, fmt.Errorf("offsets log has a gap: offsets/%d follows offsets/%d", n, i-1)
		}
	}
	if len(commits) != len(offs) {
		return 0, fmt.Errorf("log: %d offsets entries, %d commits entries", len(offs), len(commits))
	}
	var epoch uint64
	for i, n := range commits {
		if n != int64(i) {
			return 0, fmt.Errorf("commits log has a gap: commits/%d follows commits/%d", n, i-1)
		}
		data, _, err := gateway.GetBounded(ctx, cp, checkpoint.CommitKey(n), 0)
		if err != nil {
			return 0, err
		}
		c, err := checkpoint.DecodeCommit(data)
		if err != nil {
			return 0, fmt.Errorf("commits/%d: %w", n, err)
		}
		if c.Epoch < epoch {
			return 0, fmt.Errorf("commits/%d was written by epoch %d after epoch %d", n, c.Epoch, epoch)
		}
		epoch = c.Epoch
	}
	return int64(len(offs)), nil
}

// exists reports whether key is in st.
func exists(ctx context.Context, st gateway.Store, key string) (bool, error) {
	_, err := st.Stat(ctx, key)
	if errors.Is(err, gateway.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// countKeys counts the keys under dir (every file, recursively).
func countKeys(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			n++
		}
		return err
	})
	return n, err
}
