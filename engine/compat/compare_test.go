package compat

import (
	"strings"
	"testing"
)

func dur(s string) *Duration {
	d, err := ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return &d
}

func fields(s ...string) []Field {
	out := make([]Field, len(s))
	for i, f := range s {
		g, err := parseFieldString(f)
		if err != nil {
			panic(err)
		}
		out[i] = g
	}
	return out
}

func intp(n int) *int { return &n }

// basePlan is a windowed count over Kafka and files, fully known.
func basePlan() *Plan {
	keys := fields("user string", "window struct<start:timestamp,end:timestamp> not null")
	return &Plan{
		Version: 1,
		Sources: []Source{
			{Kind: "kafka", Topics: []string{"clicks"}, TopicIDs: map[string]string{"clicks": "aa01"}, ClusterID: "c1",
				Options: map[string]string{"maxOffsetsPerTrigger": "1000", "startingOffsets": "earliest"}},
			{Kind: "files", Path: "s3://b/in", Format: "json", Options: map[string]string{}},
		},
		EventTime: "ts",
		Watermark: dur("10s"),
		Filters:   []string{"page != 'health'"},
		Output:    fields("user string", "count bigint"),
		Operators: []Operator{{ID: intp(0), Kind: KindAggregate, Keys: keys, Aggregates: []string{"count(*)"},
			Window: &Window{Size: dur("5m")},
			Stores: []Store{{Name: "default", Key: keys, Value: fields("count bigint not null")}}}},
		Partitions: 8,
		OutputMode: "append",
		Sink:       &Sink{Kind: "files", Path: "s3://b/out", Options: map[string]string{}},
		Confs: ConfValues{confProvider: "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
			confShufflePartitions: "8", "spark.sql.streaming.stateStore.compression.codec": "lz4", confCheckpointFormat: "1"},
	}
}

// stateless is basePlan without its operator.
func stateless(p *Plan) { p.Operators = []Operator{} }

type ruleCase struct {
	name   string
	writer string      // "" = spark
	rec    func(*Plan) // changes the recorded side (optional)
	prop   func(*Plan) // changes the proposed side
	rule   string      // the rule expected to fire ("" = no change at all)
	class  Class
}

func runCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rp, pp := basePlan(), basePlan()
			if tc.rec != nil {
				tc.rec(rp)
			}
			if tc.prop != nil {
				tc.prop(pp)
			}
			w := tc.writer
			if w == "" {
				w = WriterSpark
			}
			res := Compare(&Recorded{Plan: rp, Writer: w}, pp)
			if tc.rule == "" {
				if len(res.Changes) != 0 {
					t.Fatalf("want no change, got %+v", res.Changes)
				}
				return
			}
			var got []string
			for _, ch := range res.Changes {
				if ch.Rule == tc.rule && ch.Class == tc.class {
					if ch.Reason == "" || ch.Field == "" {
						t.Errorf("change without field or reason: %+v", ch)
					}
					if res.Compatible != (res.Count(NotAllowed) == 0) {
						t.Errorf("compatible %v with %d not_allowed", res.Compatible, res.Count(NotAllowed))
					}
					return
				}
				got = append(got, ch.Rule+"="+string(ch.Class)+" ("+ch.Field+": "+ch.Reason+")")
			}
			t.Fatalf("want %s=%s, got:\n  %s", tc.rule, tc.class, strings.Join(got, "\n  "))
		})
	}
}

func TestCompareIdentical(t *testing.T) {
	for _, w := range []string{WriterSpark, WriterCkgate} {
		res := Compare(&Recorded{Plan: basePlan(), Writer: w}, basePlan())
		if !res.Compatible || len(res.Changes) != 0 || len(res.Unchecked) != 0 {
			t.Fatalf("%s: identical plans: %+v", w, res)
		}
	}
}

func TestRuleSources(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "a source added", prop: func(p *Plan) { p.Sources = append(p.Sources, Source{Kind: "rate"}) }, rule: RuleSourceCount, class: NotAllowed},
		{name: "a source removed", prop: func(p *Plan) { p.Sources = p.Sources[:1] }, rule: RuleSourceCount, class: NotAllowed},
		{name: "same sources", rule: ""},
		{name: "kind changed", prop: func(p *Plan) { p.Sources[1].Kind = "delta" }, rule: RuleSourceKind, class: NotAllowed},
		{name: "a long offset read by a memory source", rec: func(p *Plan) { p.Sources[1] = Source{Kind: "long"} },
			prop: func(p *Plan) { p.Sources[1] = Source{Kind: "memory"} }, rule: ""},
		{name: "a long offset read by kafka", rec: func(p *Plan) { p.Sources[1] = Source{Kind: "long"} },
			prop: func(p *Plan) { p.Sources[1] = Source{Kind: "kafka", Topics: []string{"x"}} }, rule: RuleSourceKind, class: NotAllowed},
		{name: "file and files are one kind", prop: func(p *Plan) { p.Sources[1].Kind = "file" }, rule: ""},
	})
}

func TestRuleSourceIdentity(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "another topic, same schema", prop: func(p *Plan) { p.Sources[0].Topics = []string{"clicks-v2"}; p.Sources[0].TopicIDs = nil },
			rule: RuleSourceIdentity, class: NotAllowed},
		{name: "a topic added", prop: func(p *Plan) { p.Sources[0].Topics = []string{"clicks", "views"} }, rule: RuleSourceIdentity, class: NotAllowed},
		{name: "same topics in another order", rec: func(p *Plan) { p.Sources[0].Topics = []string{"a", "b"}; p.Sources[0].TopicIDs = nil },
			prop: func(p *Plan) { p.Sources[0].Topics = []string{"b", "a"}; p.Sources[0].TopicIDs = nil }, rule: ""},
		{name: "topic re-created (another id)", prop: func(p *Plan) { p.Sources[0].TopicIDs = map[string]string{"clicks": "bb02"} },
			rule: RuleSourceIdentity, class: NotAllowed},
		{name: "another cluster", prop: func(p *Plan) { p.Sources[0].ClusterID = "c2" }, rule: RuleSourceIdentity, class: NotAllowed},
		{name: "a pattern covering the recorded topic", prop: func(p *Plan) { p.Sources[0].Topics = nil; p.Sources[0].TopicPattern = "click.*" },
			rule: RuleSourceIdentity, class: Undefined},
		{name: "a pattern missing the recorded topic", prop: func(p *Plan) { p.Sources[0].Topics = nil; p.Sources[0].TopicPattern = "views.*" },
			rule: RuleSourceIdentity, class: NotAllowed},
		{name: "another input path", prop: func(p *Plan) { p.Sources[1].Path = "s3://b/in2" }, rule: RuleSourceIdentity, class: NotAllowed},
		{name: "a directory above the files read", rec: func(p *Plan) { p.Sources[1].Path = "s3a://b/in/date=2024-01-01" },
			prop: func(p *Plan) { p.Sources[1].Path = "s3://b/in/" }, rule: ""},
		{name: "the same path spelled file:/ and file:///", rec: func(p *Plan) { p.Sources[1].Path = "file:/data/in" },
			prop: func(p *Plan) { p.Sources[1].Path = "file:///data/in/" }, rule: ""},
		{name: "another table id at the same path", rec: func(p *Plan) { p.Sources[1] = Source{Kind: "delta", Path: "s3://t/u", TableID: "t1"} },
			prop: func(p *Plan) { p.Sources[1] = Source{Kind: "delta", Path: "s3://t/u", TableID: "t2"} }, rule: RuleSourceIdentity, class: NotAllowed},
		{name: "the same table moved", rec: func(p *Plan) { p.Sources[1] = Source{Kind: "delta", Path: "s3://t/u", TableID: "t1"} },
			prop: func(p *Plan) { p.Sources[1] = Source{Kind: "delta", Path: "s3://t2/u", TableID: "t1"} }, rule: RuleSourceIdentity, class: Allowed},
		{name: "format changed (Spark)", prop: func(p *Plan) { p.Sources[1].Format = "csv" }, rule: RuleSourceIdentity, class: Undefined},
		{name: "format changed (ckgate)", writer: WriterCkgate, prop: func(p *Plan) { p.Sources[1].Format = "csv" }, rule: RuleSourceIdentity, class: NotAllowed},
		{name: "path changed (ckgate)", writer: WriterCkgate, prop: func(p *Plan) { p.Sources[1].Path = "s3://b/in/sub" }, rule: RuleSourceIdentity, class: NotAllowed},
	})
}

func TestRuleSourceOptions(t *testing.T) {
	set := func(k, v string) func(*Plan) { return func(p *Plan) { p.Sources[0].Options[k] = v } }
	runCases(t, []ruleCase{
		{name: "rate limit changed", prop: set("maxOffsetsPerTrigger", "5000"), rule: RuleSourceOptions, class: Allowed},
		{name: "rate limit removed", prop: func(p *Plan) { delete(p.Sources[0].Options, "maxOffsetsPerTrigger") }, rule: RuleSourceOptions, class: Allowed},
		{name: "starting offsets changed", prop: set("startingOffsets", "latest"), rule: RuleSourceOptions, class: Allowed},
		{name: "brokers changed", prop: set("kafka.bootstrap.servers", "b2:9092"), rule: RuleSourceOptions, class: Allowed},
		{name: "another option", prop: set("includeHeaders", "true"), rule: RuleSourceOptions, class: Undefined},
		{name: "ckgate rate source: rows per second", writer: WriterCkgate,
			rec: func(p *Plan) {
				p.Sources[0] = Source{Kind: "rate", Options: map[string]string{"rows_per_second": "100", "keys": "4", "start_ms": "1"}}
			},
			prop: func(p *Plan) {
				p.Sources[0] = Source{Kind: "rate", Options: map[string]string{"rows_per_second": "200", "keys": "4"}}
			},
			rule: RuleSourceOptions, class: NotAllowed},
		{name: "ckgate rate source, old plan (identity only): batch size and total rows", writer: WriterCkgate,
			rec: func(p *Plan) {
				p.Sources[0] = Source{Kind: "rate", Options: map[string]string{"rows_per_second": "100", "keys": "4", "start_ms": "1"}}
				p.setUnknown("source_options", "an old plan")
			},
			prop: func(p *Plan) {
				p.Sources[0] = Source{Kind: "rate", Options: map[string]string{"rows_per_second": "100", "keys": "4", "max_rows_per_batch": "7", "total_rows": "9"}}
			},
			rule: ""},
		{name: "ckgate rate source: batch size and total rows", writer: WriterCkgate,
			rec: func(p *Plan) {
				p.Sources[0] = Source{Kind: "rate", Options: map[string]string{"rows_per_second": "100", "keys": "4", "start_ms": "1", "max_rows_per_batch": "70", "total_rows": "9"}}
			},
			prop: func(p *Plan) {
				p.Sources[0] = Source{Kind: "rate", Options: map[string]string{"rows_per_second": "100", "keys": "4", "max_rows_per_batch": "7", "total_rows": "9"}}
			},
			rule: RuleSourceOptions, class: Allowed},
		{name: "ckgate rate source: another start", writer: WriterCkgate,
			rec: func(p *Plan) {
				p.Sources[0] = Source{Kind: "rate", Options: map[string]string{"rows_per_second": "100", "start_ms": "1"}}
			},
			prop: func(p *Plan) {
				p.Sources[0] = Source{Kind: "rate", Options: map[string]string{"rows_per_second": "100", "start_ms": "2"}}
			},
			rule: RuleSourceOptions, class: Allowed},
	})
}

func TestRuleSink(t *testing.T) {
	kafka := func(p *Plan) { p.Sink = &Sink{Kind: "kafka", Topic: "out"} }
	runCases(t, []ruleCase{
		{name: "file to kafka", prop: kafka, rule: RuleSinkKind, class: Allowed},
		{name: "kafka to file", rec: kafka, rule: RuleSinkKind, class: NotAllowed},
		{name: "kafka to foreach", rec: kafka, prop: func(p *Plan) { p.Sink = &Sink{Kind: "foreach"} }, rule: RuleSinkKind, class: Allowed},
		{name: "file to console", prop: func(p *Plan) { p.Sink = &Sink{Kind: "console"} }, rule: RuleSinkKind, class: Undefined},
		{name: "any kind change, ckgate", writer: WriterCkgate, prop: kafka, rule: RuleSinkKind, class: NotAllowed},
		{name: "output directory", prop: func(p *Plan) { p.Sink.Path = "s3://b/out2" }, rule: RuleSinkIdentity, class: NotAllowed},
		{name: "output directory with a trailing slash", prop: func(p *Plan) { p.Sink.Path = "s3://b/out/" }, rule: ""},
		{name: "kafka output topic", rec: kafka, prop: func(p *Plan) { p.Sink = &Sink{Kind: "kafka", Topic: "out2"} }, rule: RuleSinkIdentity, class: Allowed},
		{name: "http endpoint, ckgate", writer: WriterCkgate, rec: func(p *Plan) { p.Sink = &Sink{Kind: "http", URL: "http://a"} },
			prop: func(p *Plan) { p.Sink = &Sink{Kind: "http", URL: "http://b"} }, rule: RuleSinkIdentity, class: NotAllowed},
		{name: "a sink option", prop: func(p *Plan) { p.Sink.Options = map[string]string{"compression": "zstd"} }, rule: RuleSinkOptions, class: Undefined},
	})
}

func TestRuleFiltersProjection(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "filter added", prop: func(p *Plan) { p.Filters = append(p.Filters, "amount > 0") }, rule: RuleFilters, class: Allowed},
		{name: "filter removed", prop: func(p *Plan) { p.Filters = nil }, rule: RuleFilters, class: Allowed},
		{name: "filter respaced", prop: func(p *Plan) { p.Filters = []string{"page  !=   'health'"} }, rule: ""},
		{name: "same output schema", prop: func(p *Plan) { p.Output = fields("user string", "count long") }, rule: ""},
		{name: "another output schema", prop: func(p *Plan) { p.Output = fields("user string", "count bigint", "sum double") }, rule: RuleProjection, class: Undefined},
	})
}

func TestRuleOperators(t *testing.T) {
	dedup := Operator{ID: intp(1), Kind: KindDedup, Keys: fields("id string")}
	runCases(t, []ruleCase{
		{name: "operator added", prop: func(p *Plan) { p.Operators = append(p.Operators, dedup) }, rule: RuleOperatorAdded, class: NotAllowed},
		{name: "operator removed", prop: stateless, rule: RuleOperatorGone, class: NotAllowed},
		{name: "operator changed", prop: func(p *Plan) { p.Operators[0].Kind = KindDedup }, rule: RuleOperatorKind, class: NotAllowed},
		{name: "unknown recorded kind: its schema is compared", rec: func(p *Plan) { p.Operators[0].Kind = "" },
			prop: func(p *Plan) { p.Operators[0].Keys[0].Type = "int" }, rule: RuleKeys, class: NotAllowed},
		{name: "join type", rec: func(p *Plan) { p.Operators[0] = Operator{ID: intp(0), Kind: KindJoin, JoinType: "inner"} },
			prop: func(p *Plan) { p.Operators[0] = Operator{ID: intp(0), Kind: KindJoin, JoinType: "left_outer"} }, rule: RuleJoinType, class: NotAllowed},
		{name: "state timeout", rec: func(p *Plan) { p.Operators[0] = Operator{ID: intp(0), Kind: KindFlatMapGroups, Timeout: "none"} },
			prop: func(p *Plan) { p.Operators[0] = Operator{ID: intp(0), Kind: KindFlatMapGroups, Timeout: "event_time"} }, rule: RuleTimeout, class: NotAllowed},
		{name: "aggregate changed", prop: func(p *Plan) { p.Operators[0].Aggregates = []string{"count(*)", "sum(amount)"} }, rule: RuleAggregates, class: NotAllowed},
		{name: "count spelled count", prop: func(p *Plan) { p.Operators[0].Aggregates = []string{"COUNT"} }, rule: ""},
		{name: "window size", prop: func(p *Plan) { p.Operators[0].Window = &Window{Size: dur("10 minutes")} }, rule: RuleWindow, class: NotAllowed},
		{name: "window size spelled otherwise", prop: func(p *Plan) { p.Operators[0].Window = &Window{Size: dur("300000")} }, rule: ""},
		{name: "session gap (ckgate)", writer: WriterCkgate, rec: func(p *Plan) {
			p.Operators[0] = Operator{ID: intp(0), Kind: KindSessionWindow, Window: &Window{Gap: dur("30m")}}
		},
			prop: func(p *Plan) {
				p.Operators[0] = Operator{ID: intp(0), Kind: KindSessionWindow, Window: &Window{Gap: dur("1h")}}
			}, rule: RuleWindow, class: NotAllowed},
	})
}

func TestRuleKeys(t *testing.T) {
	setKeys := func(k ...string) func(*Plan) {
		return func(p *Plan) { p.Operators[0].Keys = fields(k...); p.Operators[0].Stores = nil }
	}
	noStores := func(p *Plan) { p.Operators[0].Stores = nil }
	runCases(t, []ruleCase{
		{name: "key type changed", rec: noStores, prop: setKeys("user bigint", "window struct<start:timestamp,end:timestamp>"), rule: RuleKeys, class: NotAllowed},
		{name: "key added", rec: noStores, prop: setKeys("user string", "window struct<start:timestamp,end:timestamp>", "page string"), rule: RuleKeys, class: NotAllowed},
		{name: "nested struct type changed", rec: noStores, prop: setKeys("user string", "window struct<start:timestamp,end:date>"), rule: RuleKeys, class: NotAllowed},
		{name: "names only (Spark ignores them)", rec: noStores, prop: setKeys("uid string", "w struct<s:timestamp,e:timestamp>"), rule: RuleKeys, class: Allowed},
		{name: "names only, ckgate", writer: WriterCkgate, rec: noStores, prop: setKeys("uid string", "window struct<start:timestamp,end:timestamp>"), rule: RuleKeys, class: NotAllowed},
		{name: "type aliases", rec: noStores, prop: setKeys("user string", "window struct<start:timestamp,end:timestamp>"), rule: ""},
		{name: "not-null key made nullable", rec: noStores,
			prop: func(p *Plan) {
				p.Operators[0].Keys = []Field{{Name: "user", Type: "string"}, {Name: "window", Type: "struct<start:timestamp,end:timestamp>", Nullable: new(bool)}}
				*p.Operators[0].Keys[1].Nullable = true
				p.Operators[0].Stores = nil
			}, rule: RuleKeys, class: NotAllowed},
		{name: "nullable key made not null", rec: noStores, prop: setKeys("user string not null", "window struct<start:timestamp,end:timestamp> not null"), rule: ""},
		{name: "dedup columns added (3.3.0 test)", rec: func(p *Plan) {
			p.Operators[0] = Operator{ID: intp(0), Kind: KindDedup, Keys: fields("_1 string")}
		}, prop: func(p *Plan) {
			p.Operators[0] = Operator{ID: intp(0), Kind: KindDedup, Keys: fields("_1 string", "_2 int")}
		}, rule: RuleKeys, class: NotAllowed},
	})
}

func TestRuleStateSchema(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "value type changed", prop: func(p *Plan) { p.Operators[0].Stores[0].Value = fields("count int not null") }, rule: RuleStateSchema, class: NotAllowed},
		{name: "value field added", prop: func(p *Plan) { p.Operators[0].Stores[0].Value = fields("count bigint", "sum double") }, rule: RuleStateSchema, class: NotAllowed},
		{name: "key type changed", prop: func(p *Plan) {
			p.Operators[0].Stores[0].Key = fields("user int", "window struct<start:timestamp,end:timestamp>")
		},
			rule: RuleStateSchema, class: NotAllowed},
		{name: "store added", prop: func(p *Plan) {
			p.Operators[0].Stores = append(p.Operators[0].Stores, Store{Name: "default", Family: "extra", Key: fields("k string")})
		}, rule: RuleStateSchema, class: NotAllowed},
		{name: "store removed", prop: func(p *Plan) {
			p.Operators[0].Stores = []Store{{Name: "other", Key: p.Operators[0].Stores[0].Key}}
		}, rule: RuleStateSchema, class: NotAllowed},
		{name: "value field renamed", prop: func(p *Plan) { p.Operators[0].Stores[0].Value = fields("n bigint not null") }, rule: RuleStateSchema, class: Allowed},
	})
}

func TestRuleTimeAndMode(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "event time, stateful", prop: func(p *Plan) { p.EventTime = "created" }, rule: RuleEventTime, class: NotAllowed},
		{name: "event time, stateless", rec: stateless, prop: func(p *Plan) { stateless(p); p.EventTime = "created" }, rule: RuleEventTime, class: Allowed},
		{name: "watermark delay", prop: func(p *Plan) { p.Watermark = dur("1m") }, rule: RuleWatermark, class: Undefined},
		{name: "watermark delay spelled otherwise", prop: func(p *Plan) { p.Watermark = dur("10 seconds") }, rule: ""},
		{name: "watermark removed, stateful", prop: func(p *Plan) { p.Watermark = nil }, rule: RuleWatermark, class: NotAllowed},
		{name: "watermark added, stateless", rec: func(p *Plan) { stateless(p); p.Watermark = nil }, prop: stateless, rule: RuleWatermark, class: Allowed},
		{name: "watermark removed, delay not recorded", rec: func(p *Plan) { p.setUnknown("watermark", "not recorded") },
			prop: func(p *Plan) { p.Watermark = nil }, rule: ""}, // WatermarkMs 0: nothing says it had one
		{name: "partitions", prop: func(p *Plan) { p.Partitions = 16 }, rule: RulePartitions, class: NotAllowed},
		{name: "partitions from the proposal's confs", prop: func(p *Plan) { p.Partitions = 0; p.Confs[confShufflePartitions] = "200" }, rule: RulePartitions, class: NotAllowed},
		{name: "partitions, stateless", rec: stateless, prop: func(p *Plan) { stateless(p); p.Partitions = 16 }, rule: RulePartitions, class: Allowed},
		{name: "output mode, stateful", prop: func(p *Plan) { p.OutputMode = "update" }, rule: RuleOutputMode, class: NotAllowed},
		{name: "output mode, stateless", rec: stateless, prop: func(p *Plan) { stateless(p); p.OutputMode = "update" }, rule: RuleOutputMode, class: Allowed},
		{name: "output mode, stateless ckgate", writer: WriterCkgate, rec: stateless, prop: func(p *Plan) { stateless(p); p.OutputMode = "update" },
			rule: RuleOutputMode, class: NotAllowed},
	})
}

func TestWatermarkRemovedFromSparkCheckpoint(t *testing.T) {
	rec := basePlan()
	rec.setUnknown("watermark", "not recorded")
	prop := basePlan()
	prop.Watermark = nil
	res := Compare(&Recorded{Plan: rec, Writer: WriterSpark, WatermarkMs: 5000}, prop)
	if res.Compatible || res.Changes[0].Rule != RuleWatermark {
		t.Fatalf("removing a watermark the checkpoint used: %+v", res.Changes)
	}
	prop.Watermark = dur("1m")
	res = Compare(&Recorded{Plan: rec, Writer: WriterSpark, WatermarkMs: 5000}, prop)
	if !res.Compatible || len(res.Unchecked) != 1 || !strings.Contains(res.Unchecked[0].Reason, "5000 ms") {
		t.Fatalf("an unrecorded delay: %+v %+v", res.Changes, res.Unchecked)
	}
}

func TestRuleConfs(t *testing.T) {
	set := func(k, v string) func(*Plan) { return func(p *Plan) { p.Confs[k] = v } }
	runCases(t, []ruleCase{
		{name: "state store provider", prop: set(confProvider, "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"), rule: RuleConf, class: NotAllowed},
		{name: "watermark policy", rec: set(confWatermarkPolicy, "min"), prop: set(confWatermarkPolicy, "max"), rule: RuleConf, class: NotAllowed},
		{name: "checkpoint format version", prop: set(confCheckpointFormat, "2"), rule: RuleConf, class: NotAllowed},
		{name: "codec (pinned, ignored)", prop: set("spark.sql.streaming.stateStore.compression.codec", "zstd"), rule: RuleConf, class: Allowed},
		{name: "a conf the checkpoint does not pin", prop: set("spark.sql.adaptive.enabled", "false"), rule: ""},
	})
}

// TestUnchecked: what a Spark checkpoint does not record is listed, not
// compared, and does not make the plans incompatible.
func TestUnchecked(t *testing.T) {
	rec := basePlan()
	for _, part := range []string{"output_mode", "sink", "filters", "output", "event_time"} {
		rec.setUnknown(part, "Spark does not record it")
	}
	rec.OutputMode, rec.Sink, rec.Filters, rec.Output, rec.EventTime = "", nil, nil, nil, ""
	rec.Sources[0].Options = nil
	rec.Operators[0].Aggregates, rec.Operators[0].Window = nil, nil
	prop := basePlan()
	prop.OutputMode = "complete"
	res := Compare(&Recorded{Plan: rec, Writer: WriterSpark}, prop)
	if !res.Compatible || len(res.Changes) != 0 {
		t.Fatalf("changes on unrecorded parts: %+v", res.Changes)
	}
	got := map[string]bool{}
	for _, u := range res.Unchecked {
		got[u.Field] = true
	}
	for _, f := range []string{"output_mode", "sink", "filters", "output", "event_time", "sources[0].options", "operators[id=0].aggregates", "operators[id=0].window"} {
		if !got[f] {
			t.Errorf("%s not listed as unchecked: %+v", f, res.Unchecked)
		}
	}
}
