// Package compat decides whether a proposed streaming query may restart
// from an existing checkpoint: "a safe release process compares the
// proposed logical plan with the existing checkpoint before deployment".
//
// Compare takes what the checkpoint records (FromCheckpoint; optionally
// completed by WithBaseline) and the proposed query (ParsePlan for a
// PLAN.json, FromSpec for a ckgate spec) and classifies every difference
// as Spark's documentation does ("Recovery Semantics after Changes in a
// Streaming Query"): Allowed, NotAllowed, or Undefined (allowed, but the
// effect depends on the query), each with the rule that decided and the
// reason. What cannot be compared — the checkpoint does not record it, or
// the proposal does not say it — is listed as Unchecked, never guessed.
//
// # What a checkpoint records
//
// A checkpoint written by ckgate's engine has _ckgate/plan.json: the source
// and sink identity, the operator, its keys, window and aggregates, the
// event-time column, the output mode and the partitions. The engine
// refuses a restart when any of these differ (the partitions recorded
// there silently win), so for such checkpoints compat classifies those
// differences NotAllowed even where Spark would allow them. Its settings
// (checkpoint.PlanSettings: the watermark delay, the where filter, the other
// source and sink options, the state format) are those of the latest run;
// a restart may change them (but the state format), and compat classifies
// each change, so nothing a spec says is unchecked. A plan written before
// ckgate recorded its settings lacks them: those parts are unchecked.
//
// A Spark checkpoint records less: the sources of the latest offsets (how
// many, their kind where the offset says it, Kafka topics, the files a
// file source read, a Delta table's id), the confs the offset log pins
// (spark.sql.shuffle.partitions, the state store provider, state format
// versions, the codec, the watermark policy), the commit log version, and
// per stateful operator its metadata (Spark 4: its name) and state schema
// files (Spark 3.1+: key and value schema of every store). Spark does not
// record the output mode, the sink, filters, projections, the event-time
// column or the watermark delay, nor (before 4.0) which operator a state
// directory belongs to. A baseline — the PLAN.json of the query that wrote
// the checkpoint — fills those in (WithBaseline); the checkpoint wins where
// both speak.
//
// # PLAN.json
//
// A small JSON file a user writes for a Spark query (`ckgate compat
// --print-recorded` prints what a checkpoint records in this form, to
// start from). Every field but version and sources is optional; an omitted
// part is not compared. Unknown fields are refused.
//
//	{
//	  "version": 1,
//	  "name": "clicks-per-user",
//	  "sources": [
//	    {"kind": "kafka", "topics": ["clicks"], "topic_ids": {"clicks": "9f3c…"}, "cluster_id": "lkc-1",
//	     "options": {"kafka.bootstrap.servers": "b1:9092", "maxOffsetsPerTrigger": "10000"}},
//	    {"kind": "files", "path": "s3://bucket/in/", "format": "json"},
//	    {"kind": "delta", "path": "s3://bucket/tables/users", "table_id": "5f2e…"}
//	  ],
//	  "event_time": "ts",
//	  "watermark": "10 minutes",
//	  "filters": ["page != 'health'"],
//	  "output": ["user string", "window struct<start:timestamp,end:timestamp>", "count bigint"],
//	  "operators": [
//	    {"id": 0, "kind": "aggregate", "keys": ["user string", "window struct<start:timestamp,end:timestamp> not null"],
//	     "aggregates": ["count(*)"], "window": {"size": "5m"},
//	     "stores": [{"name": "default", "key": ["user string", "window struct<start:timestamp,end:timestamp> not null"],
//	                 "value": ["count bigint not null"]}]}
//	  ],
//	  "partitions": 200,
//	  "output_mode": "append",
//	  "sink": {"kind": "kafka", "topic": "counts"},
//	  "confs": {"spark.sql.streaming.stateStore.providerClass": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"}
//	}
//
// Sources are listed in the query's order (the lines of offsets/N). Source
// identity is what a source reads, not its schema: Kafka topics (or
// topic_pattern), topic ids and cluster id; the path of files; a table's
// id. Operators are the stateful ones, by state/<id> (id defaults to the
// position); kind is one of aggregate, session_window, dedup,
// dedup_within_watermark, join, flat_map_groups_with_state,
// transform_with_state, limit. keys are the grouping, dedup or equi-join
// keys in order (a window or session grouping is a key: window
// struct<start:timestamp,end:timestamp>); stores give exact state schemas
// (store name; family for transformWithState's column families), which is
// what Spark itself compares. A field is "name type [not null]" or
// {"name", "type", "nullable"}; types are Spark SQL types (int, bigint,
// string, double, timestamp, decimal(10,2), array<T>, map<K,V>,
// struct<a:T,…>). A field without a type, or without "not null"/nullable,
// is compared by position only, or without nullability. Durations are "10s",
// "10 seconds" or milliseconds.
//
// # Rules
//
//	rule              difference                                        class
//	source-count      number of sources                                 not_allowed
//	source-kind       kind of a source (kafka → files)                  not_allowed
//	source-identity   Kafka topics, topic id, cluster id; input path;   not_allowed (same schema but another
//	                  table id; file format (ckgate)                    topic/path/table is another source)
//	                  a topic pattern matching every recorded topic     undefined
//	                  the same table id at another path                 allowed
//	                  file format (Spark)                               undefined
//	source-options    rate limits (maxOffsetsPerTrigger, max_files_…)   allowed
//	                  starting offsets/version/timestamp                allowed (used only on a first start)
//	                  brokers, failOnDataLoss, consumer settings        allowed
//	                  ckgate rate rows_per_second, keys                 not_allowed (its identity)
//	                  any other option                                  undefined (depends on the source)
//	sink-kind         file → Kafka; Kafka ↔ foreach                     allowed
//	                  Kafka → file                                      not_allowed
//	                  other pairs                                       undefined (case by case)
//	                  any change, ckgate                                not_allowed
//	sink-identity     file sink output directory, output table          not_allowed
//	                  Kafka output topic                                allowed
//	                  HTTP endpoint, output format                      undefined (ckgate: not_allowed)
//	sink-options      any                                               undefined
//	filters           filter added or removed                           allowed
//	projection        output schema changed                             undefined (the sink must accept it)
//	operator-added    a stateful operator without state                 not_allowed
//	operator-removed  state without its operator                        not_allowed
//	operator-kind     another operator at the same id                   not_allowed
//	keys              number or type of grouping/dedup/join keys;       not_allowed (STATE_STORE_KEY_SCHEMA_
//	                  a not-null key made nullable; ckgate: names       NOT_COMPATIBLE)
//	                  names only (Spark)                                allowed
//	state-schema      store added/removed; key or value schema as keys  not_allowed
//	aggregates        aggregates changed                                not_allowed
//	window            window size, slide or gap                         not_allowed
//	join-type         inner ↔ outer                                     not_allowed
//	state-timeout     flatMapGroupsWithState timeout                    not_allowed
//	event-time        event-time column, stateful query                 not_allowed (stateless: allowed)
//	watermark         delay changed, stateful query                     undefined (Change.Late: the late rows
//	                                                                    handled differently)
//	                  added or removed, stateful query                  not_allowed (stateless: allowed)
//	partitions        state partitions, stateful query                  not_allowed (pinned; Spark 2.1: fails)
//	output-mode       stateful query, or any ckgate query               not_allowed (Spark stateless: allowed)
//	state-format      ckgate's state format                             not_allowed
//	conf              state store provider, multipleWatermarkPolicy,    not_allowed
//	                  checkpointFormatVersion ≠ the commit log's
//	                  other confs the offset log pins                   allowed (the recorded value wins)
//
// Result.Compatible is false when any change is not_allowed. `ckgate
// compat` exits 1 then; undefined changes are printed as warnings and fail
// only with --strict; unchecked parts never fail.
//
// # Errors
//
// ParsePlan returns a *PlanError naming the field at fault. FromCheckpoint
// fails when _ckgate/plan.json or a state schema cannot be read; other
// problems of the checkpoint are Inspect's findings, not compat's.
package compat
