package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// WriterKey is the only mutable object of a checkpoint: who writes it now.
const WriterKey = "_ckgate/writer"

// DefaultLease is how long a writer owns a checkpoint without a heartbeat.
const DefaultLease = 30 * time.Second

// WriterRecord is the content of WriterKey. Every write of it carries a
// fresh WriteID, so a compare-and-swap on content-derived versions (S3 ETags
// are MD5s) never sees the same bytes twice.
type WriterRecord struct {
	Epoch     uint64    `json:"epoch"`
	QueryID   string    `json:"query_id"`
	Owner     string    `json:"owner"` // host:pid
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Principal string    `json:"principal,omitempty"`
	Since     time.Time `json:"since"`     // when this epoch began
	Heartbeat time.Time `json:"heartbeat"` // last renewal
	LeaseMs   int64     `json:"lease_ms"`
	WriteID   string    `json:"write_id"`
	Released  bool      `json:"released,omitempty"` // closed cleanly
}

// Lease returns the record's lease, DefaultLease when unset.
func (r WriterRecord) Lease() time.Duration {
	if r.LeaseMs <= 0 {
		return DefaultLease
	}
	return time.Duration(r.LeaseMs) * time.Millisecond
}

// Live reports whether the owner still holds its lease at now.
func (r WriterRecord) Live(now time.Time) bool {
	return !r.Released && now.Before(r.Heartbeat.Add(r.Lease()))
}

// Encode returns the JSON form of r.
func (r WriterRecord) Encode() []byte {
	b, _ := json.Marshal(r) // a struct of plain fields always marshals
	return append(b, '\n')
}

// ParseWriterRecord decodes the content of WriterKey. A record without an
// epoch, write id or owner is corrupt: the error names the key rather than
// reading it as epoch zero.
func ParseWriterRecord(data []byte) (WriterRecord, error) {
	var r WriterRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return WriterRecord{}, fmt.Errorf("%s: not a writer record: %w", WriterKey, err)
	}
	if dec.More() {
		return WriterRecord{}, fmt.Errorf("%s: trailing data after the writer record", WriterKey)
	}
	switch {
	case r.Epoch == 0:
		return WriterRecord{}, fmt.Errorf("%s: writer record without an epoch", WriterKey)
	case r.WriteID == "":
		return WriterRecord{}, fmt.Errorf("%s: writer record without a write id", WriterKey)
	case r.Owner == "":
		return WriterRecord{}, fmt.Errorf("%s: writer record without an owner", WriterKey)
	case r.LeaseMs < 0:
		return WriterRecord{}, fmt.Errorf("%s: writer record with a negative lease", WriterKey)
	}
	return r, nil
}

// NewWriteID returns a random 128-bit id in hex.
func NewWriteID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(errors.New("crypto/rand failed: " + err.Error()))
	}
	return hex.EncodeToString(b[:])
}
