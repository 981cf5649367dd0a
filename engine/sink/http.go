package sink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// EffectsDir is where the http sink keeps its ledger in the checkpoint.
const EffectsDir = "_ckgate/effects"

// httpSink POSTs each batch's rows in chunks of batch_size records. Every
// record carries the idempotency key <query id>/<batch id>/<record id>
// (record ids count from 0 in the batch's deterministic output order), and
// each request carries the Idempotency-Key <query id>/<batch id>/<first
// record id>. A chunk the receiver accepted (2xx) is recorded create-only
// in the checkpoint as _ckgate/effects/<batch>/<first record id>; a re-run
// batch skips every chunk the ledger holds. A crash between the receiver's
// answer and the ledger write re-sends that one chunk, with the same keys,
// for the receiver to recognise.
//
// Request body:
//
//	{"query":"<id>","batch":N,"records":[{"key":"<id>/N/0","record":{…}},…]}
type httpSink struct {
	url     string
	headers map[string]string
	size    int
	client  *http.Client
	env     Env
}

func newHTTP(_ context.Context, s *spec.Spec, env Env) (Sink, error) {
	if env.Checkpoint == nil || env.QueryID == "" {
		return nil, errors.New("http sink: needs the checkpoint (for its ledger) and the query id")
	}
	return &httpSink{url: s.Sink.URL, headers: s.Sink.Headers, size: s.Sink.BatchSize,
		client: &http.Client{Timeout: s.Sink.Timeout.D()}, env: env}, nil
}

// Identity names the endpoint by its URL redacted (gateway.Redact: user
// info, fragment and every query value but the known-safe ones hidden) and
// the SHA-256 of the full URL (URLHashKey), so that a restart with another
// hidden value is still told apart: it is recorded in the checkpoint's
// plan and printed in progress events.
func (h *httpSink) Identity() map[string]string {
	return map[string]string{"kind": spec.SinkHTTP, "url": gateway.Redact(h.url), URLHashKey: URLHash(h.url)}
}

func (h *httpSink) Close() error {
	h.client.CloseIdleConnections()
	return nil
}

// LedgerKey is the ledger entry of the chunk of batch that starts at record first.
func LedgerKey(batch int64, first int) string {
	return fmt.Sprintf("%s/%d/%08d", EffectsDir, batch, first)
}

// RecordKey is the idempotency key of one record.
func RecordKey(query string, batch int64, record int) string {
	return query + "/" + strconv.FormatInt(batch, 10) + "/" + strconv.Itoa(record)
}

func (h *httpSink) Commit(ctx context.Context, batch int64, rows []row.Row) (Result, error) {
	done := map[string]bool{}
	for a, err := range h.env.Checkpoint.List(ctx, fmt.Sprintf("%s/%d/", EffectsDir, batch)) {
		if err != nil {
			return Result{}, fmt.Errorf("http sink ledger: %w", err)
		}
		done[a.Key] = true
	}
	var res Result
	skipped := 0
	for first := 0; first < len(rows); first += h.size {
		key := LedgerKey(batch, first)
		if done[key] {
			skipped++
			continue
		}
		last := min(len(rows), first+h.size)
		body := h.body(batch, rows[first:last], first)
		status, err := h.post(ctx, RecordKey(h.env.QueryID, batch, first), body)
		if err != nil {
			return res, fmt.Errorf("http sink %s: batch %d records %d-%d: %w", gateway.Redact(h.url), batch, first, last-1, err)
		}
		entry := fmt.Appendf(nil, `{"batch":%d,"first":%d,"last":%d,"status":%d,"at":%q}`,
			batch, first, last-1, status, h.env.Now().UTC().Format(time.RFC3339Nano))
		if _, err := h.env.Checkpoint.Put(ctx, key, entry, gateway.IfAbsent()); err != nil && !errors.Is(err, gateway.ErrExists) {
			return res, fmt.Errorf("http sink ledger: %w", err)
		}
		res.Rows += int64(last - first)
		res.Bytes += int64(len(body))
	}
	res.Skipped = skipped > 0 && res.Rows == 0
	return res, nil
}

func (h *httpSink) body(batch int64, rows []row.Row, first int) []byte {
	b := fmt.Appendf(nil, `{"query":%q,"batch":%d,"records":[`, h.env.QueryID, batch)
	for i := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"key":%q,"record":`, RecordKey(h.env.QueryID, batch, first+i))
		b = row.AppendJSON(b, &rows[i])
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// post sends one request, retrying a 5xx, a 429 or a transport error
// three times with a growing pause; a 4xx is final.
func (h *httpSink) post(ctx context.Context, idem string, body []byte) (int, error) {
	var last error
	for attempt := range 4 {
		if attempt > 0 {
			if err := gateway.Sleep(ctx, time.Duration(attempt*attempt)*100*time.Millisecond); err != nil {
				return 0, err
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
		if err != nil {
			return 0, errors.New(gateway.Redact(err.Error())) // a parse error quotes the URL
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", idem)
		for k, v := range h.headers {
			req.Header.Set(k, v)
		}
		resp, err := h.client.Do(req)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				ue.URL = gateway.Redact(ue.URL) // a token in the URL stays out of messages
			}
			last = err
			continue
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			return resp.StatusCode, nil
		}
		last = fmt.Errorf("HTTP %d: %s", resp.StatusCode, gateway.Redact(strings.TrimSpace(string(msg))))
		if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
			return resp.StatusCode, last
		}
	}
	return 0, last
}
