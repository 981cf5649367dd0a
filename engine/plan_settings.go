package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// StateFormat names the state layout the engine writes: engine/state's
// files (magic CKGS, format 1), one store per operator, keyed as the
// operator says. A checkpoint whose plan records another one cannot be
// restored by this engine.
const StateFormat = "ckgs/1"

// HeadersHashKey is the sink option that holds the SHA-256 of an HTTP
// sink's header names and values.
const HeadersHashKey = "headers_sha256"

// SettingsOf returns the settings of s as the engine records them.
func SettingsOf(s *spec.Spec) checkpoint.PlanSettings {
	p := checkpoint.PlanSettings{EventTime: s.EventTime, WatermarkMs: s.Watermark.Ms(), Where: s.Where,
		SourceOptions: map[string]string{}, SinkOptions: map[string]string{}}
	src := s.Source
	switch src.Kind {
	case spec.SourceFiles:
		p.SourceOptions["max_files_per_batch"] = strconv.Itoa(src.MaxFilesPerBatch)
	case spec.SourceRate:
		p.SourceOptions["total_rows"] = strconv.FormatInt(src.TotalRows, 10)
		p.SourceOptions["max_rows_per_batch"] = strconv.FormatInt(src.MaxRowsPerBatch, 10)
	case spec.SourceDelta:
		p.SourceOptions["max_files_per_batch"] = strconv.Itoa(src.MaxFilesPerBatch)
		p.SourceOptions["starting_version"] = src.StartingVersion
	case spec.SourceKafka:
		p.SourceOptions["brokers"] = strings.Join(src.Brokers, ",")
		p.SourceOptions["starting_offsets"] = src.StartingOffsets
		p.SourceOptions["max_offsets_per_trigger"] = strconv.FormatInt(src.MaxOffsetsPerTrigger, 10)
	}
	if k := s.Sink; k.Kind == spec.SinkHTTP {
		p.SinkOptions["timeout_ms"] = strconv.FormatInt(k.Timeout.Ms(), 10)
		p.SinkOptions["batch_size"] = strconv.Itoa(k.BatchSize)
		if len(k.Headers) > 0 {
			names := slices.Sorted(maps.Keys(k.Headers))
			h := sha256.New()
			for _, n := range names {
				fmt.Fprintf(h, "%d:%s%d:%s", len(n), n, len(k.Headers[n]), k.Headers[n])
			}
			p.SinkOptions["headers"] = strings.Join(names, ",")
			p.SinkOptions[HeadersHashKey] = "sha256:" + hex.EncodeToString(h.Sum(nil))
		}
	}
	if v := sink.FormatVersion(s); v != "" {
		p.SinkOptions[sink.FormatVersionKey] = v
	}
	if s.Stateful() {
		p.StateFormat = StateFormat
	}
	return p
}

// settingsDiff says what differs between the recorded settings (nil: a
// plan written before ckgate recorded them) and want, "" when nothing.
func settingsDiff(got *checkpoint.PlanSettings, want checkpoint.PlanSettings) string {
	if got == nil {
		return "the plan did not record the settings (watermark, where, source and sink options, state format): recorded now"
	}
	return jsonDiff(got, want)
}

// keepSinkFormat returns want with the sink format version the recorded
// settings got say (sink.RecordedFormat: a parquet sink of a plan that
// records none has format 1), so that an existing sink never mixes two
// shapes of files; a checkpoint that holds no batch yet has written
// nothing to its sink and takes the spec's version.
func keepSinkFormat(ctx context.Context, cp gateway.Store, got *checkpoint.PlanSettings, want *checkpoint.PlanSettings) (*checkpoint.PlanSettings, error) {
	v, ok := want.SinkOptions[sink.FormatVersionKey]
	if !ok {
		return want, nil
	}
	rec := sink.FormatStringTimes
	if got != nil {
		if r, ok := got.SinkOptions[sink.FormatVersionKey]; ok {
			rec = r
		}
	}
	if rec == v {
		return want, nil
	}
	empty, err := HoldsNoBatch(ctx, cp)
	if err != nil || empty {
		return want, err
	}
	out := *want
	out.SinkOptions = maps.Clone(want.SinkOptions)
	out.SinkOptions[sink.FormatVersionKey] = rec
	return &out, nil
}
