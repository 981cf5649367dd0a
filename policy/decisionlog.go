package policy

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// DecisionRecord is one line of the decision log.
type DecisionRecord struct {
	DecisionID string    `json:"decision_id"`
	Time       time.Time `json:"time"`
	Principal  Principal `json:"principal"`
	Action     string    `json:"action"`
	Key        string    `json:"key,omitempty"`
	Path       string    `json:"path,omitempty"`
	Root       string    `json:"root,omitempty"`
	QueryID    string    `json:"query_id,omitempty"`
	Result     string    `json:"result"` // allow or deny
	// Rules are the ids of the denying rules, or of the rules a break glass
	// overrode.
	Rules    []string `json:"rules,omitempty"`
	Messages []string `json:"messages,omitempty"`
	// Warnings are "ID: msg" of the rules of severity warn that hit.
	Warnings   []string `json:"warnings,omitempty"`
	BreakGlass bool     `json:"break_glass,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Error      string   `json:"error,omitempty"`
	// DryRun says the decision was not enforced (a guard made WithDryRun):
	// a "deny" here was let through.
	DryRun    bool  `json:"dry_run,omitempty"`
	ElapsedUs int64 `json:"elapsed_us"`
}

// DecisionLog writes decisions as JSON lines. It is safe for concurrent
// use; a nil *DecisionLog logs nothing.
type DecisionLog struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() time.Time
	err     error
	sync    func() error // after each record (a file: fsync); nil: none
	console bool         // "-": a break glass cannot be recorded here
}

// NewDecisionLog returns a log writing to w (a file, os.Stderr).
func NewDecisionLog(w io.Writer) *DecisionLog {
	return &DecisionLog{w: w, now: time.Now}
}

// Record writes r as one JSON line, secrets masked; a zero Time is now and
// an empty DecisionID a fresh one. The first write error is kept (Err) and
// returned. A log opened by OpenDecisionLog on a file is fsynced after each
// record (Record returns once the record is durable); a console log
// refuses an allowed break glass.
func (l *DecisionLog) Record(r DecisionRecord) error {
	if l == nil {
		return nil
	}
	if l.console && r.BreakGlass && r.Result == "allow" {
		return fmt.Errorf("decision log: %w", errConsoleBreakGlass)
	}
	if r.DecisionID == "" {
		r.DecisionID = gateway.NewWriteID()
	}
	if r.Time.IsZero() {
		r.Time = l.now()
	}
	r.Time = r.Time.UTC()
	r.mask()
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("decision log: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.w.Write(line)
	if err == nil && l.sync != nil {
		err = l.sync()
	}
	if err != nil {
		err = fmt.Errorf("decision log: %w", err)
		if l.err == nil {
			l.err = err
		}
		return err
	}
	return nil
}

// Err returns the first write error, if any.
func (l *DecisionLog) Err() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// mask redacts every text field with gateway.Redact.
func (r *DecisionRecord) mask() {
	r.Principal.ID = gateway.Redact(r.Principal.ID)
	r.Principal.Reason = gateway.Redact(r.Principal.Reason)
	r.Key = gateway.Redact(r.Key)
	r.Path = gateway.Redact(r.Path)
	r.Root = gateway.Redact(r.Root)
	r.Reason = gateway.Redact(r.Reason)
	r.Error = gateway.Redact(r.Error)
	for i, m := range r.Messages {
		r.Messages[i] = gateway.Redact(m)
	}
}
