package main

import (
	"strconv"
	"strings"
)

// example is one line of a command's EXAMPLES help section: what it does
// and the command line, which works as printed from a checkout of the
// repository after `make demo` (local paths; TestHelpExamplesRun runs
// them) or with the store's credentials (cloud URLs).
type example struct {
	what, line string // a line ending "# exit N" exits N
}

// examples are the EXAMPLES of every command, by full command name ("" is
// the app itself, "retention plan" a subcommand). They live here, not in
// the command files, and are applied to the command tree when App builds
// it (setupCommand); TestEveryCommandHasExamples fails for a command that
// has fewer than 2 or more than 4, or an example that names a flag the
// command does not have. Entries for commands not in the tree are ignored.
var examples = map[string][]example{
	"": {
		{"sessionize the demo clickstream (make demo generates it)", "ckgate run testdata/specs/clickstream-sessions.yaml --checkpoint demo/checkpoint --available-now"},
		{"who wrote a checkpoint, where it stands, what a restart will do", "ckgate inspect demo/checkpoint"},
		{"flags go anywhere, global ones too", "ckgate inspect demo/checkpoint --log-level debug --json"},
		{"tab completion in the running bash", "source <(ckgate completion bash)"},
	},

	"serve": {
		{"an S3 endpoint over a local directory of checkpoints (buckets are its subdirectories)", "ckgate serve --listen 127.0.0.1:9000 --store file:///data/checkpoints --credentials /etc/ckgate/serve-credentials.yaml"},
		{"over S3, every decision logged", "ckgate serve --store s3://my-bucket/checkpoints --credentials /etc/ckgate/serve-credentials.yaml --decision-log /var/log/ckgate/decisions.jsonl"},
		{"onboarding a production job: decide and log every request, enforce nothing", "ckgate serve --store s3://my-bucket/checkpoints --credentials /etc/ckgate/serve-credentials.yaml --dry-run --decision-log /var/log/ckgate/dry-run.jsonl"},
		{"on all interfaces over GCS, signatures for one region only, with site policies", "ckgate serve --listen 0.0.0.0:9000 --store gs://my-bucket/checkpoints --credentials /etc/ckgate/serve-credentials.yaml --region eu-west-1 --policy /etc/ckgate/policies"},
	},

	"ui": {
		{"every checkpoint in a bucket, in the browser", "ckgate ui s3://my-bucket/checkpoints"},
		{"the demo checkpoint and Spark's, on a chosen port, the address printed only", "ckgate ui --listen 127.0.0.1:8080 --no-browser file://$PWD/demo/checkpoint file://$PWD/testdata/spark"},
	},
	"report": {
		{"the demo checkpoint as one HTML file", "ckgate report --html demo/checkpoint.html demo/checkpoint"},
		{"a fleet: Spark's checkpoints of testdata and the demo's", "ckgate report --html demo/fleet.html testdata/spark demo/checkpoint"},
		{"every checkpoint under a bucket prefix, for an incident ticket", "ckgate report --html incident.html s3://my-bucket/checkpoints"},
	},

	"store": {
		{"list the top of a checkpoint", "ckgate store ls demo/checkpoint"},
		{"print the query id record", "ckgate store cat demo/checkpoint metadata"},
	},
	"store ls": {
		{"the top level, directories folded", "ckgate store ls demo/checkpoint"},
		{"every key of the offsets log", "ckgate store ls -r demo/checkpoint offsets/"},
		{"a checkpoint on S3, as JSON", "ckgate store ls -r s3://my-bucket/checkpoints/sessions --json"},
	},
	"store cat": {
		{"the query id record", "ckgate store cat demo/checkpoint metadata"},
		{"the end offsets of batch 0", "ckgate store cat demo/checkpoint offsets/0"},
	},
	"store put": {
		{"create a key from stdin in a root made by store mb (create-only: exits 3 if it exists)", "echo hello | ckgate store put - demo/scratch notes/hello.txt"},
		{"replace a key outside any checkpoint", "ckgate store put testdata/specs/clickstream-sessions.yaml demo/scratch notes/readme.md --overwrite"},
		{"upload to S3", "ckgate store put report.json s3://my-bucket/reports report.json"},
	},
	"store rm": {
		{"remove a key outside any checkpoint", "ckgate store rm demo/scratch notes/readme.md"},
		{"remove only if nobody changed it since it was listed", "ckgate store rm --if-match VERSION s3://my-bucket/reports report.json"},
	},
	"store mb": {
		{"make a local root directory", "ckgate store mb demo/scratch"},
		{"make a bucket on an S3 emulator", "ckgate store mb 's3://my-bucket?endpoint=http://127.0.0.1:7070&path_style=true&region=us-east-1'"},
	},

	"validate-access": {
		{"probe a local checkpoint root", "ckgate validate-access demo/checkpoint"},
		{"probe S3 as the job's role, checking who the store sees", "ckgate validate-access s3://my-bucket/checkpoints/sessions --aws-role-arn arn:aws:iam::123456789012:role/streaming-job --expect-principal arn:aws:sts::123456789012:assumed-role/streaming-job"},
		{"probe GCS as a service account, JUnit for CI", "ckgate validate-access gs://my-bucket/checkpoints/sessions --gcs-impersonate job@my-project.iam.gserviceaccount.com --format junit"},
		{"run as root, probe as the job's own user", "sudo ckgate validate-access /data/checkpoints/sessions --as-user spark"},
	},

	"run": {
		{"process what the source holds now, then stop", "ckgate run testdata/specs/clickstream-sessions.yaml --checkpoint demo/checkpoint --available-now"},
		{"progress as JSON lines, one event per batch", "ckgate run testdata/specs/clickstream-sessions.yaml --checkpoint demo/checkpoint --available-now --json"},
		{"run on S3 with Prometheus metrics", "ckgate run testdata/specs/clickstream-sessions.yaml --checkpoint s3://my-bucket/checkpoints/sessions --metrics-addr 127.0.0.1:9108"},
	},

	"audit": {
		{"audit a checkpoint against the default policies", "ckgate audit demo/checkpoint"},
		{"check a bucket's lifecycle rules against a 3-day outage window", "ckgate audit s3://my-bucket/checkpoints/sessions --lifecycle my-bucket=testdata/lifecycle/s3/mixed.json --outage-window 3d"},
		{"SARIF for code scanning", "ckgate audit demo/checkpoint --format sarif"},
		{"do the Delta tables the checkpoints read keep their files and log for a 3-day outage?", "ckgate audit testdata/delta-checkpoints --delta testdata/delta/history-delta-0.2.0 --outage-window 3d"},
	},

	"policy": {
		{"run the default policies' unit tests", "ckgate policy test"},
		{"list the rules", "ckgate policy rules"},
	},
	"policy test": {
		{"the default policies' unit tests", "ckgate policy test"},
		{"your policies with the defaults, every test listed", "ckgate policy test testdata/policies/example -v"},
		{"only the tests whose name matches", "ckgate policy test testdata/policies/example --run size_limit"},
	},
	"policy rules": {
		{"the default rules", "ckgate policy rules"},
		{"with your policies added, as JSON", "ckgate policy rules --policy testdata/policies/example --json"},
	},
	"policy eval": {
		{"may a housekeeping job delete a log entry?", `echo '{"action":"delete","key":"offsets/3","root":"file:///data/ck","principal":{"id":"cleaner","kind":"housekeeping"}}' | ckgate policy eval -   # exit 4`},
		{"decide an input file with your policies, as JSON", "ckgate policy eval input.json --policy testdata/policies/example --json"},
	},

	"inspect": {
		{"where a checkpoint stands", "ckgate inspect demo/checkpoint"},
		{"with the file sink's manifest log", "ckgate inspect demo/checkpoint --sink demo/out/sessions"},
		{"did the in-flight batch reach a Delta sink table?", "ckgate inspect testdata/delta-checkpoints/sink-committed --sink testdata/delta/history-delta-0.2.0"},
		{"one batch in detail, as JSON", "ckgate inspect demo/checkpoint --batch 0 --json"},
	},

	"compat": {
		{"may the spec restart from this checkpoint?", "ckgate compat demo/checkpoint --spec testdata/specs/clickstream-sessions.yaml"},
		{"what the checkpoint records, as PLAN.json", "ckgate compat demo/checkpoint --print-recorded"},
		{"a Spark query's plan, undefined changes failing too", "ckgate compat s3://my-bucket/checkpoints/orders --plan testdata/plans/example.json --strict"},
		{"is the Delta table at the source's location still the one the stream read?", "ckgate compat testdata/delta-checkpoints/reads-replaced --plan testdata/delta-checkpoints/delta-source.plan.json --delta testdata/delta/history-delta-0.2.0   # exit 1"},
	},

	"retention": {
		{"what retention would remove, with reasons", "ckgate retention plan demo/checkpoint --min-batches 2"},
		{"remove it, through the policy", "ckgate retention apply demo/checkpoint --min-batches 2"},
	},
	"retention plan": {
		{"keep the latest 2 batches", "ckgate retention plan demo/checkpoint --min-batches 2"},
		{"keep 3 days too, and plan the sink's manifests", "ckgate retention plan demo/checkpoint --min-batches 2 --retain-for 3d --sink demo/out/sessions"},
		{"as JSON", "ckgate retention plan demo/checkpoint --json"},
		{"write the plan for review, then apply exactly it", "ckgate retention plan demo/checkpoint --min-batches 2 --out demo/retention-plan.json"},
	},
	"retention apply": {
		{"apply exactly the reviewed plan (exit 3 if the checkpoint changed under it)", "ckgate retention apply --plan demo/retention-plan.json"},
		{"delete what the plan removes", "ckgate retention apply demo/checkpoint --min-batches 2"},
		{"record every decision", "ckgate retention apply demo/checkpoint --min-batches 2 --decision-log demo/retention-decisions.jsonl"},
	},

	"gap": {
		{"deleted input files of a files source", "ckgate gap demo/checkpoint"},
		{"what Kafka can still replay, as JSON", "ckgate gap s3://my-bucket/checkpoints/orders --kafka broker1:9092,broker2:9092 --json"},
		{"a stream over a Delta table: can it still replay from where it stopped?", "ckgate gap testdata/delta-checkpoints/reads-vacuumed --delta testdata/delta/snapshot-vacuumed   # exit 1"},
		{"source 0 reads a Delta table on S3, source 1 an Iceberg table, as JSON", "ckgate gap s3://my-bucket/checkpoints/orders --delta 0=s3://my-bucket/tables/orders --iceberg 1=s3://my-bucket/warehouse/db/events --json"},
	},

	"archive": {
		{"a verified copy on the local disk", "ckgate archive demo/checkpoint demo/archive-1"},
		{"from S3 to GCS, 32 keys at a time", "ckgate archive s3://my-bucket/checkpoints/sessions gs://backup-bucket/sessions-2026-12-01 --concurrency 32"},
		{"archive and mark the root for a fresh start", `ckgate archive demo/checkpoint demo/archive-2 --fresh-start --new demo/checkpoint-v2 --reason "schema change"`},
	},
	"archive verify": {
		{"check an archive against its manifest", "ckgate archive verify demo/archive-1"},
		{"an archive on GCS", "ckgate archive verify gs://backup-bucket/sessions-2026-12-01"},
	},
	"restore": {
		{"restore an archive into a new, empty root", "ckgate restore demo/archive-1 demo/checkpoint-restored"},
		{"from GCS back to S3", "ckgate restore gs://backup-bucket/sessions-2026-12-01 s3://my-bucket/checkpoints/sessions-restored"},
	},

	"fresh-start": {
		{"start after the files the first 3 batches read", `ckgate fresh-start demo/checkpoint --new demo/checkpoint-v2 --archive-to demo/archive-fs --from-offsets '{"batch":2}' --reason "replay after a bug fix"`},
		{"Kafka: from the first records at or after a time", `ckgate fresh-start s3://my-bucket/checkpoints/orders --new s3://my-bucket/checkpoints/orders-v2 --archive-to s3://my-bucket/archive/orders --from-timestamp 2026-12-01T00:00:00Z --brokers broker1:9092 --reason "topic recreated"`},
	},

	"rehearse": {
		{"every drill on an isolated copy", "ckgate rehearse testdata/specs/clickstream-sessions.yaml --checkpoint demo/checkpoint"},
		{"two drills, a fixed seed", "ckgate rehearse testdata/specs/clickstream-sessions.yaml --scenarios 1,2 --seed 42"},
		{"cutover: a 20m watermark against the current query, from batch 2, restarting after batch 4 (late rows named)", "ckgate rehearse testdata/specs/clickstream-sessions.yaml --candidate testdata/specs/clickstream-sessions-watermark-20m.yaml --checkpoint demo/archive-1 --from-batch 2 --restart-at 4   # exit 1"},
		{"cutover: a changed session gap needs a new checkpoint (JSON)", "ckgate rehearse testdata/specs/clickstream-sessions.yaml --candidate testdata/specs/clickstream-sessions-gap-45m.yaml --checkpoint demo/archive-1 --interval 2026-01-01T10:00:00Z..2026-01-01T10:30:00Z --json   # exit 1"},
	},

	"completion": {
		{"bash, in the running shell", "source <(ckgate completion bash)"},
		{"zsh, for every new shell", `ckgate completion zsh > "${fpath[1]}/_ckgate"`},
		{"fish", "ckgate completion fish > ~/.config/fish/completions/ckgate.fish"},
	},
	"docs": {
		{"write the man page into man/", "ckgate docs man man"},
		{"read it", "ckgate docs man man && man -l man/ckgate.1"},
	},
	"docs man": {
		{"write man/ckgate.1", "ckgate docs man man"},
		{"install it for every user", "sudo ckgate docs man /usr/local/share/man/man1"},
	},
}

// examplesSection is the EXAMPLES section of the help of the command named
// name, quoted for a help template ("" when it has none).
func examplesSection(name string) string {
	ex := examples[name]
	if len(ex) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nEXAMPLES:\n")
	for i, x := range ex {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("   # " + x.what + "\n   " + x.line + "\n")
	}
	// A template action holding a quoted string prints it as it is,
	// whatever braces an example has.
	return "{{" + strconv.Quote(b.String()) + "}}"
}
