package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ckgate/ckgate/engine/compat"
)

const plansTestdata = "../../testdata/plans"

// planVariant writes testdata/plans/<name> with each old→new replacement
// applied (each must apply) and returns its path.
func planVariant(t *testing.T, name string, repl ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(plansTestdata, name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i < len(repl); i += 2 {
		if !strings.Contains(s, repl[i]) {
			t.Fatalf("%s does not contain %q", name, repl[i])
		}
		s = strings.ReplaceAll(s, repl[i], repl[i+1])
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func compatJSON(t *testing.T, r result) compatOutput {
	t.Helper()
	var o compatOutput
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
		t.Fatalf("compat --format json: %v\n%s", err, r.stdout)
	}
	return o
}

// TestCompatSpark330Dedup: a PLAN.json that matches the 3.3.0 dedup
// checkpoint passes; changing the key type, adding a dedup column (Spark's
// own test: STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE) or the partitions fails.
func TestCompatSpark330Dedup(t *testing.T) {
	cp := filepath.Join(sparkTestdata, "checkpoint-version-3.3.0-streaming-deduplication")
	const plan = "spark-3.3.0-dedup.json"
	ckgate(t, Options{}, "", "compat", "--plan", filepath.Join(plansTestdata, plan), cp).want(t, 0, "VERDICT     COMPATIBLE", "CHANGES: none", "UNCHECKED", "output_mode")
	for _, tc := range []struct {
		name  string
		repl  []string
		rule  string
		words []string
	}{
		{"key type", []string{`"_1 string"`, `"_1 int"`}, compat.RuleKeys, []string{"_1: string → int", "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"}},
		{"a second dedup column", []string{`"keys": ["_1 string"]`, `"keys": ["_1 string", "_2 int"]`}, compat.RuleKeys, []string{"number of dedup columns"}},
		{"partitions", []string{`"partitions": 5`, `"partitions": 10`}, compat.RulePartitions, []string{"hash-partitioned into 5 partitions"}},
		{"value schema", []string{`"_2 int not null"`, `"_2 bigint not null"`}, compat.RuleStateSchema, []string{"STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planVariant(t, plan, tc.repl...)
			r := ckgate(t, Options{}, "", "compat", "--plan", p, cp)
			r.want(t, 1, append([]string{"NOT COMPATIBLE", "NOT_ALLOWED", tc.rule}, tc.words...)...)
			if !strings.Contains(r.stderr, "not allowed (first: "+tc.rule) {
				t.Errorf("stderr: %s", r.stderr)
			}
			o := compatJSON(t, ckgate(t, Options{}, "", "compat", "--format", "json", "--plan", p, cp))
			if o.Compatible || o.Count(compat.NotAllowed) < 1 || o.Changes[0].Rule != tc.rule || o.Writer != "spark" || o.QueryID == "" {
				t.Errorf("json: %+v", o.Result)
			}
		})
	}
	t.Run("an operator added", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(plansTestdata, plan))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		m["operators"] = append(m["operators"].([]any), map[string]any{"id": 1, "kind": "aggregate", "keys": []string{"_1 string"}})
		if data, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "PLAN.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ckgate(t, Options{}, "", "compat", "--plan", p, cp).want(t, 1, compat.RuleOperatorAdded, "operators[id=1]")
	})
}

func TestCompatSparkOthers(t *testing.T) {
	agg := filepath.Join(plansTestdata, "spark-4.0.0-agg.json")
	ckgate(t, Options{}, "", "compat", "--plan", agg, filepath.Join(sparkTestdata, "checkpoint-version-4.0.0/hdfs/agg")).want(t, 0, "COMPATIBLE")
	// the same query on the RocksDB checkpoint: the provider is pinned
	ckgate(t, Options{}, "", "compat", "--plan", agg, filepath.Join(sparkTestdata, "checkpoint-version-4.0.0/rocksdb/agg")).
		want(t, 1, "confs.spark.sql.streaming.stateStore.providerClass", "RocksDBStateStoreProvider")
	// another operator on the 4.0 checkpoint (operator metadata names it)
	ckgate(t, Options{}, "", "compat", "--plan", planVariant(t, "spark-4.0.0-agg.json", `"kind": "aggregate"`, `"kind": "dedup"`),
		filepath.Join(sparkTestdata, "checkpoint-version-4.0.0/hdfs/agg")).want(t, 1, compat.RuleOperatorKind, "stateStoreSave")

	kafka := filepath.Join(sparkTestdata, "kafka/checkpoint-version-2.4.3-kafka-include-headers-default")
	kplan := filepath.Join(plansTestdata, "spark-2.4.3-kafka-dedup.json")
	ckgate(t, Options{}, "", "compat", "--plan", kplan, kafka).want(t, 0, "UNDEFINED", "topic_pattern")
	ckgate(t, Options{}, "", "compat", "--strict", "--plan", kplan, kafka).wantErr(t, 1, "undefined (--strict)")
	// another topic with the same schema is another source
	other := planVariant(t, "spark-2.4.3-kafka-dedup.json", `"topic_pattern": "spark-test-topic-.*"`, `"topics": ["spark-test-topic-other"]`)
	ckgate(t, Options{}, "", "compat", "--plan", other, kafka).want(t, 1, compat.RuleSourceIdentity, "another topic is another source")
	// number and kind of sources
	join := filepath.Join(sparkTestdata, "checkpoint-version-2.4.0-streaming-join")
	ckgate(t, Options{}, "", "compat", "--plan", filepath.Join(plansTestdata, "spark-2.4.0-join.json"), join).want(t, 0, "COMPATIBLE", "join_type")
	ckgate(t, Options{}, "", "compat", "--plan", planVariant(t, "spark-2.4.0-join.json", `[{"kind": "memory"}, {"kind": "memory"}]`, `[{"kind": "memory"}]`), join).
		want(t, 1, compat.RuleSourceCount, "There are [n] sources")
	ckgate(t, Options{}, "", "compat", "--plan", planVariant(t, "spark-2.4.0-join.json", `{"kind": "memory"}, {"kind": "memory"}`, `{"kind": "memory"}, {"kind": "kafka", "topics": ["t"]}`), join).
		want(t, 1, compat.RuleSourceKind)
	// Spark 2.1: no conf in the offset log, 10 state partitions
	ckgate(t, Options{}, "", "compat", "--plan", planVariant(t, "spark-3.3.0-dedup.json", `"partitions": 5`, `"partitions": 15`),
		filepath.Join(sparkTestdata, "checkpoint-version-2.1.0")).want(t, 1, "the restart fails (state partitions are missing)")
}

// TestCompatPrintRecorded: what a checkpoint records, printed as PLAN.json,
// parses and is compatible with the checkpoint.
func TestCompatPrintRecorded(t *testing.T) {
	for _, tc := range []struct {
		dir       string
		watermark bool // the batches have a watermark: the printed plan needs the query's delay
	}{
		{"checkpoint-version-4.0.0/hdfs/agg", false},
		{"checkpoint-version-4.0.0-checkpoint-v2/rocksdb/join1", true},
		{"checkpoint-version-4.0.0-tws-unsaferow", false},
		{"checkpoint-version-3.2.0-session-window-with-repartition", true},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			cp := filepath.Join(sparkTestdata, tc.dir)
			r := ckgate(t, Options{}, "", "compat", "--print-recorded", cp)
			r.want(t, 0, `"version": 1`, `"operators"`)
			if !strings.Contains(r.stderr, "not recorded: output_mode") || strings.Contains(r.stderr, "set the watermark delay") != tc.watermark {
				t.Errorf("stderr: %s", r.stderr)
			}
			if _, err := compat.ParsePlan([]byte(r.stdout)); err != nil {
				t.Fatalf("%v\n%s", err, r.stdout)
			}
			p := filepath.Join(t.TempDir(), "PLAN.json")
			if err := os.WriteFile(p, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			if !tc.watermark {
				ckgate(t, Options{}, "", "compat", "--plan", p, cp).want(t, 0, "CHANGES: none")
				return
			}
			ckgate(t, Options{}, "", "compat", "--plan", p, cp).want(t, 1, "removing the watermark")
			withWM := strings.Replace(r.stdout, `"version": 1,`, `"version": 1, "watermark": "5s",`, 1)
			if err := os.WriteFile(p, []byte(withWM), 0o644); err != nil {
				t.Fatal(err)
			}
			ckgate(t, Options{}, "", "compat", "--plan", p, cp).want(t, 0, "CHANGES: none")
		})
	}
	r := ckgate(t, Options{}, "", "compat", "--print-recorded", filepath.Join(sparkTestdata, "checkpoint-version-2.1.0"))
	r.want(t, 0)
	if !strings.Contains(r.stderr, "set its kind") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

func TestCompatUsage(t *testing.T) {
	cp := filepath.Join(sparkTestdata, "checkpoint-version-3.3.0-streaming-deduplication")
	plan := filepath.Join(plansTestdata, "spark-3.3.0-dedup.json")
	ckgate(t, Options{}, "", "compat", cp).wantErr(t, 2, "want one of --spec SPEC or --plan PLAN.json")
	ckgate(t, Options{}, "", "compat", "--plan", plan, "--spec", "x.yaml", cp).wantErr(t, 2, "want one of")
	ckgate(t, Options{}, "", "compat", "--print-recorded", "--plan", plan, cp).wantErr(t, 2, "--print-recorded takes no")
	ckgate(t, Options{}, "", "compat", "--plan", "nope.json", cp).wantErr(t, 2, "nope.json")
	ckgate(t, Options{}, "", "compat", "--plan", planVariant(t, "spark-3.3.0-dedup.json", `"dedup"`, `"dedupe"`), cp).
		wantErr(t, 2, "spark-3.3.0-dedup.json: operators[0].kind: \"dedupe\"")
	ckgate(t, Options{}, "", "compat", "--spec", writeFile(t, "name: x\n"), cp).wantErr(t, 2)
	empty := t.TempDir()
	ckgate(t, Options{}, "", "compat", "--plan", plan, empty).wantErr(t, 2, "not a checkpoint")
	ckgate(t, Options{}, "", "compat", "--plan", plan, "--format", "xml", cp).wantErr(t, 2, "--format")
	ckgate(t, Options{}, "", "compat", "--help").want(t, 0, "EXIT STATUS:", "--plan", "--spec", "not_allowed", "undefined")
}

// TestCompatCkgateCheckpoint compares specs with a checkpoint `ckgate run`
// wrote, and checks that compat agrees with the engine: what compat calls
// not_allowed, `ckgate run` refuses; what it accepts, run accepts.
func TestCompatCkgateCheckpoint(t *testing.T) {
	cp := runRateQuery(t, rateSpec)
	dir := filepath.Dir(cp)
	variant := func(t *testing.T, old, new string) string {
		t.Helper()
		if !strings.Contains(rateSpec, old) {
			t.Fatalf("rateSpec lacks %q", old)
		}
		p := filepath.Join(dir, strings.NewReplacer(" ", "_", ":", "", "/", "", "{", "", "}", "", ",", "").Replace(new)+".yaml")
		if err := os.WriteFile(p, []byte(strings.Replace(rateSpec, old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	same := filepath.Join(dir, "q.yaml")
	ckgate(t, Options{}, "", "compat", "--spec", same, cp).want(t, 0, "(ckgate, query", "CHANGES: none", "0 unchecked")
	o := compatJSON(t, ckgate(t, Options{}, "", "compat", "--format", "json", "--spec", same, cp))
	if o.Writer != compat.WriterCkgate || !o.Compatible {
		t.Fatalf("json %+v", o.Result)
	}
	for _, tc := range []struct {
		name     string
		old, new string
		rule     string // "" = compatible
		engine   bool   // `ckgate run` refuses it too
	}{
		{"rows per second", "rows_per_second: 100", "rows_per_second: 50", compat.RuleSourceOptions, true},
		{"window size", "size: 1s", "size: 2s", compat.RuleWindow, true},
		{"aggregates", "aggregates: [count]", "aggregates: [count, {sum: value}]", compat.RuleAggregates, true},
		{"keys", "keys: [key]", "keys: [value]", compat.RuleKeys, true},
		{"operator", "operator: {kind: tumbling_window, keys: [key], size: 1s, aggregates: [count]}", "operator: {kind: dedup, keys: [key]}", compat.RuleOperatorKind, true},
		{"output mode", "output_mode: append", "output_mode: update", compat.RuleOutputMode, true},
		{"sink", "sink: {kind: noop}", "sink: {kind: console}", compat.RuleSinkKind, true},
		{"event time", "event_time: timestamp", "event_time: value", compat.RuleEventTime, true},
		{"partitions (the engine keeps the recorded 4)", "partitions: 4", "partitions: 8", compat.RulePartitions, false},
		{"batch size", "max_rows_per_batch: 100", "max_rows_per_batch: 50", "", false},
		{"filter", "watermark: 10s", "watermark: 10s\nwhere: 'value > 5'", "", false},
		{"watermark delay", "watermark: 10s", "watermark: 20s", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := variant(t, tc.old, tc.new)
			r := ckgate(t, Options{}, "", "compat", "--spec", sp, cp)
			if tc.rule == "" {
				r.want(t, 0, "COMPATIBLE")
			} else {
				r.want(t, 1, "NOT COMPATIBLE", tc.rule, "ckgate")
			}
			run := ckgate(t, Options{}, "", "run", "--format", "json", "--available-now", "--checkpoint", cp, sp)
			refused := strings.Contains(run.stderr, "incompatible with the checkpoint")
			if refused != tc.engine {
				t.Fatalf("ckgate run refused=%v (exit %d), want %v; compat says %s\nstderr: %s", refused, run.code, tc.engine, tc.rule, run.stderr)
			}
		})
	}
	// the where filter and watermark are recorded: those of the latest run
	// (the "watermark delay" case above ran with 20s); a baseline does not
	// override what the checkpoint records
	wm := variant(t, "watermark: 10s", "watermark: 30s")
	ckgate(t, Options{}, "", "compat", "--spec", wm, cp).want(t, 0, "UNDEFINED", "watermark", "recorded  20s", "late rows between")
	ckgate(t, Options{}, "", "compat", "--baseline", same, "--spec", wm, cp).want(t, 0, "UNDEFINED", "watermark", "20s", "30s")
	ckgate(t, Options{}, "", "compat", "--strict", "--baseline", same, "--spec", wm, cp).wantErr(t, 1, "undefined")
}

// TestCompatKafkaResolve: a Kafka topic deleted and re-created under the
// same name is another source. Only the brokers know its id: compat
// --resolve asks them, and agrees with `ckgate run`, which refuses it.
func TestCompatKafkaResolve(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "clicks"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("clicks"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	var recs []*kgo.Record
	for i := range 30 {
		recs = append(recs, &kgo.Record{Key: []byte{byte('a' + i%3)},
			Value: fmt.Appendf(nil, `{"ts": %d, "uid": "u%d", "amount": %d}`, 1767225600000+int64(i)*1000, i%3, i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sp := filepath.Join(dir, "kafka.yaml")
	write(t, dir, "kafka.yaml", fmt.Sprintf(`name: kafka-counts
source: {kind: kafka, brokers: [%s], topic: clicks}
event_time: ts
watermark: 1h
operator: {kind: tumbling_window, keys: [uid], size: 5m, aggregates: [count]}
output_mode: update
sink: {kind: noop}
partitions: 2
`, c.ListenAddrs()[0]))
	cp := filepath.Join(dir, "ck")
	ckgate(t, Options{}, "", "run", "--format", "json", "--available-now", "--checkpoint", cp, sp).want(t, 0)

	ckgate(t, Options{}, "", "compat", "--spec", sp, cp).want(t, 0, "CHANGES: none", "topic_ids.clicks", "--resolve")
	r := ckgate(t, Options{}, "", "compat", "--resolve", "--spec", sp, cp)
	r.want(t, 0, "CHANGES: none")
	if strings.Contains(r.stdout, "topic_ids") {
		t.Fatalf("resolved, yet the topic id is unchecked:\n%s", r.stdout)
	}

	// delete and re-create the topic: same name, same schema, another source
	del := kmsg.NewPtrDeleteTopicsRequest()
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = kmsg.StringPtr("clicks")
	del.Topics = append(del.Topics, dt)
	del.TopicNames = []string{"clicks"}
	if _, err := del.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	cr := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "clicks", 3, 1
	cr.Topics = append(cr.Topics, ct)
	if _, err := cr.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "compat", "--resolve", "--spec", sp, cp).want(t, 1, "NOT_ALLOWED", compat.RuleSourceIdentity,
		"sources[0].topic_ids.clicks", "deleted and re-created")
	run := ckgate(t, Options{}, "", "run", "--format", "json", "--available-now", "--checkpoint", cp, sp)
	if run.code == 0 || !strings.Contains(run.stderr, "topic_id") {
		t.Fatalf("ckgate run on the re-created topic: exit %d\n%s", run.code, run.stderr)
	}
}
