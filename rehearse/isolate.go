package rehearse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/lifecycle"
)

// rehearsal is one Run: the isolated query, its input and its reference.
type rehearsal struct {
	opts       Options
	orig       *spec.Spec
	base       *spec.Spec // the spec every drill runs (source and sink redirected per drill)
	input      string     // canonical URL of the input
	files      []inputFile
	plan       planStats
	keyCols    []string
	workdir    string
	production Production
	ref        *refRun
	log        *slog.Logger
}

// resolve makes a relative path absolute against BaseDir; URLs stay.
func (r *rehearsal) resolve(p string) string {
	if strings.Contains(p, "://") || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(r.opts.BaseDir, p)
}

// isolate checks that the query can be rehearsed in isolation and reads
// its input.
func (r *rehearsal) isolate(ctx context.Context) error {
	s := *r.orig
	in := r.opts.Input
	switch {
	case in != "":
		if s.Source.Kind != spec.SourceFiles {
			r.log.Info("rehearse: the spec's source is replaced by a files source over --input", "kind", s.Source.Kind)
		}
		s.Source = spec.Source{Kind: spec.SourceFiles, Path: in, Format: "jsonl", MaxFilesPerBatch: s.Source.MaxFilesPerBatch}
	case s.Source.Kind == spec.SourceFiles:
		in = s.Source.Path
	default:
		return setupErrorf("source kind %s: give --input DIR, a directory of JSON-lines files holding the rows the source delivers (rehearse never reads a live %s source)", s.Source.Kind, s.Source.Kind)
	}
	if s.Source.MaxFilesPerBatch <= 0 {
		s.Source.MaxFilesPerBatch = spec.DefaultMaxFilesPerBatch
	}
	switch s.Sink.Kind {
	case spec.SinkFiles:
		s.Sink.Format = "jsonl" // reconciliation reads rows; the drill's copy needs no parquet
	case spec.SinkHTTP:
	default:
		return setupErrorf("sink kind %s: rehearse reconciles a files or http sink (a %s sink keeps no effects to compare)", s.Sink.Kind, s.Sink.Kind)
	}
	s.Trigger.AvailableNow = true
	r.base = &s
	r.keyCols = businessKey(&s)

	u, err := gateway.ParseURL(r.resolve(in))
	if err != nil {
		return setupErrorf("input %s: %v", in, err)
	}
	r.input = u.String()
	if u.Scheme == "file" {
		fi, err := os.Stat(filepath.FromSlash(u.Path))
		if err != nil {
			return setupErrorf("input %s: %v", in, err)
		}
		if !fi.IsDir() {
			return setupErrorf("input %s is not a directory", in)
		}
	}
	st, err := r.opts.Registry.Open(ctx, r.input)
	if err != nil {
		return setupErrorf("input %s: %v", in, err)
	}
	defer gateway.Close(st)
	if r.files, err = loadInput(ctx, readOnly(st)); err != nil {
		return setupErrorf("input %s: %v", in, err)
	}
	if len(r.files) == 0 {
		return setupErrorf("input %s holds no files", in)
	}
	if r.plan, err = simulate(r.base, r.files); err != nil {
		return setupErrorf("input %s: %v", in, err)
	}
	return nil
}

// readOnly refuses every mutation: what rehearse reads from production
// (the input, the production checkpoint) it cannot change.
func readOnly(s gateway.Store) gateway.Store {
	return gateway.Intercept(s, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		if c.Op.Mutates() {
			return gateway.E(string(c.Op), c.Key, gateway.ErrPermission, errors.New("rehearse only reads production stores"))
		}
		return next(ctx)
	})
}

// archiveProduction archives the production checkpoint, when there is
// one, into the work directory (lifecycle.Archive: a verified copy; the
// source is only read).
func (r *rehearsal) archiveProduction(ctx context.Context) (Production, error) {
	raw := r.opts.Checkpoint
	if raw == "" {
		raw = filepath.Join("checkpoints", r.orig.Name)
	}
	p := Production{Checkpoint: gateway.Redact(raw)}
	u, err := gateway.ParseURL(r.resolve(raw))
	if err != nil {
		return p, setupErrorf("checkpoint %s: %v", raw, err)
	}
	if u.Scheme == "file" {
		if _, err := os.Stat(filepath.FromSlash(u.Path)); errors.Is(err, os.ErrNotExist) {
			p.Note = "no production checkpoint: nothing archived"
			return p, nil
		}
	}
	st, err := r.opts.Registry.Open(ctx, u.String())
	if err != nil {
		return p, setupErrorf("checkpoint %s: %v", raw, err)
	}
	defer gateway.Close(st)
	src := readOnly(st)
	empty := true
	for _, err := range src.List(ctx, "") {
		if err != nil && !errors.Is(err, gateway.ErrNotFound) {
			return p, fmt.Errorf("checkpoint %s: %w", gateway.Redact(raw), err)
		}
		empty = err != nil
		break
	}
	if empty {
		p.Note = "no production checkpoint: nothing archived"
		return p, nil
	}
	p.Found = true
	dir := filepath.Join(r.workdir, "production-archive")
	dst, err := newDirStore(dir)
	if err != nil {
		return p, err
	}
	defer gateway.Close(dst)
	res, err := lifecycle.Archive(ctx, src, dst, lifecycle.ArchiveOptions{Source: raw, Dest: dir,
		Principal: lifecycle.Principal{ID: "ckgate-rehearse", Kind: "housekeeping"}, Reason: "ckgate rehearse: read-only copy",
		AllowLiveWriter: true})
	if errors.Is(err, checkpoint.ErrNotCheckpoint) {
		p.Note = "the production location holds keys but no checkpoint: not archived"
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("archive the production checkpoint %s: %w", gateway.Redact(raw), err)
	}
	p.Archive, p.Files, p.Bytes = dir, res.Manifest.Files, res.Manifest.Bytes
	p.QueryID, p.Status = res.Manifest.QueryID, res.Manifest.Status
	p.Note = "read only: archived and verified (size and SHA-256 of every key)"
	return p, nil
}

// newDirStore makes dir and returns a local store rooted there.
func newDirStore(dir string) (gateway.Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return filestore.New(dir)
}

// wrapRegistry returns a registry that opens through base and passes every
// store (with its URL) through wrap.
func wrapRegistry(base *gateway.Registry, wrap func(*url.URL, gateway.Store) gateway.Store) *gateway.Registry {
	reg := gateway.NewRegistry()
	for _, scheme := range base.Schemes() {
		reg.Register(scheme, func(ctx context.Context, u *url.URL) (gateway.Store, error) {
			s, err := base.Open(ctx, u.String())
			if err != nil {
				return nil, err
			}
			return wrap(u, s), nil
		})
	}
	return reg
}

// checkApart refuses a work directory inside the input or the input inside
// it: the drills would read their own files.
func (r *rehearsal) checkApart() error {
	u, err := gateway.ParseURL(r.input)
	if err != nil || u.Scheme != "file" {
		return nil
	}
	in := filepath.Clean(filepath.FromSlash(u.Path))
	wd := filepath.Clean(r.workdir)
	inside := func(child, parent string) bool {
		rel, err := filepath.Rel(parent, child)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	if inside(wd, in) || inside(in, wd) {
		return setupErrorf("the work directory %s and the input %s overlap: the drills would read their own files", wd, in)
	}
	return nil
}
