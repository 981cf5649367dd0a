package validate

import (
	"context"
	"errors"
	"sync"
	"time"
)

// outcome is what a probe function returns; run turns it into a Result.
type outcome struct {
	status  Status
	message string // "" for a failure: the error's first line
	code    string // overrides the code found in err
	address string
	err     error
}

func passf(msg string) outcome { return outcome{status: Pass, message: msg} }

func failErr(msg string, err error) outcome { return outcome{status: Fail, message: msg, err: err} }

func unknownErr(msg string, err error) outcome {
	return outcome{status: Unknown, message: msg, err: err}
}

// node is one probe in the dependency graph of a run.
type node struct {
	layer Layer
	op    string
	// needs must have run without failing (pass or unknown); a failed or
	// skipped need skips this probe.
	needs []*node
	// after only orders: this probe starts when they are done, whatever
	// their result.
	after []*node
	run   func(ctx context.Context) outcome
	// writes marks a probe that writes to the store: once started it runs
	// to its end even when the run is interrupted or times out (bounded by
	// writeGrace), so that no write is left with an unknown outcome that
	// could land after the cleanup.
	writes bool

	res  Result
	done chan struct{}
}

// graph holds the probes of one run in report order.
type graph struct {
	nodes []*node
	red   *redactor
}

func (g *graph) add(layer Layer, op string, run func(context.Context) outcome, needs ...*node) *node {
	n := &node{layer: layer, op: op, needs: needs, run: run, done: make(chan struct{})}
	g.nodes = append(g.nodes, n)
	return n
}

// execute runs every probe as soon as the probes it depends on are done,
// so independent probes run concurrently, and returns when all are done.
// Once ctx ends (interrupted or timed out) no probe starts and probes that
// read are cancelled; a probe that writes and has started runs to its end,
// bounded by writeGrace alone: a write abandoned at the deadline could
// still land on the server after the cleanup removed its key.
func (g *graph) execute(ctx context.Context) {
	writes, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeGrace)
	defer cancel()
	var wg sync.WaitGroup
	for _, n := range g.nodes {
		wg.Go(func() {
			defer close(n.done)
			n.res = g.runNode(ctx, writes, n)
		})
	}
	wg.Wait()
}

// writeGrace bounds a started write probe, whatever the run's timeout.
const writeGrace = cleanupTimeout

func (g *graph) runNode(ctx, writes context.Context, n *node) Result {
	for _, d := range n.needs {
		<-d.done
	}
	for _, d := range n.after {
		<-d.done
	}
	res := Result{Layer: n.layer, Operation: n.op}
	for _, d := range n.needs {
		switch d.res.Result {
		case Fail:
			res.Result, res.Message = Skip, "skipped: "+string(d.layer)+"/"+d.op+" failed"
			return res
		case Skip:
			res.Result, res.Message = Skip, "skipped: "+string(d.layer)+"/"+d.op+" did not run"
			return res
		}
	}
	if err := ctx.Err(); err != nil {
		res.Result, res.Message = Skip, "skipped: "+stopReason(err)
		return res
	}
	runCtx := ctx
	if n.writes {
		runCtx = writes
	}
	start := time.Now()
	o := n.run(runCtx)
	res.DurationMS = ms(time.Since(start))
	return g.result(res, o)
}

// result fills res from o.
func (g *graph) result(res Result, o outcome) Result {
	res.Result, res.Message, res.Address = o.status, o.message, o.address
	if o.err != nil {
		info := inspect(o.err)
		res.Code, res.Kind, res.RequestID = info.code, info.kind, info.requestID
		if res.Message == "" {
			res.Message = firstLine(o.err.Error())
		} else if o.status != Pass {
			res.Message += ": " + firstLine(o.err.Error())
		}
	}
	if o.code != "" {
		res.Code = o.code
	}
	res.Message = g.red.clean(res.Message)
	res.Address = g.red.clean(res.Address)
	return res
}

func stopReason(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the run timed out"
	}
	return "the run was interrupted"
}
