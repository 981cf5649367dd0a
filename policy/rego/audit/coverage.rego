# Which lifecycle rules reach which checkpoints.
package ckgate.audit.coverage

# applies: the bucket configuration b is the one of checkpoint cp's bucket
# (a configuration or a checkpoint without a bucket name matches any).
applies(b, _) if object.get(b, "bucket", "") == ""

applies(_, cp) if object.get(cp, "bucket", "") == ""

applies(b, cp) if b.bucket == cp.bucket

# top_entries are the names directly under a checkpoint root ("offsets/" for
# a directory); discovery lists the real ones, these are the fallback.
default_entries := ["metadata", "offsets/", "commits/", "sources/", "state/", "_ckgate/"]

entries(cp) := cp.entries if count(object.get(cp, "entries", [])) > 0

else := default_entries

# keys are the key prefixes of the checkpoint's files within the bucket.
keys(cp) := [concat("", [base, e]) | some e in entries(cp)] if {
	cp.path != ""
	base := concat("", [trim_suffix(cp.path, "/"), "/"])
}

keys(cp) := entries(cp) if cp.path == ""

# Azure rules name the container first in their prefixes ("ckpt/team/"):
# the checkpoint's keys get its container in front. When the container is
# not known (a local directory audited as a bucket), the rule's container
# part is dropped instead and the rule taken to match it.
scoped_keys(scope, cp) := [concat("/", [cp.bucket, k]) | some k in keys(cp)] if {
	object.get(scope, "container_in_prefix", false)
	object.get(cp, "bucket", "") != ""
}

else := keys(cp)

scoped_prefix(scope, p, cp) := without_container(p) if {
	object.get(scope, "container_in_prefix", false)
	object.get(cp, "bucket", "") == ""
}

else := p

without_container(p) := substring(p, indexof(p, "/") + 1, -1) if contains(p, "/")

else := ""

# prefix_hits: a rule prefix reaches some file of the checkpoint when it is a
# prefix of one of its key prefixes, or one of them is a prefix of it
# (a rule on team/q1/state/ hits the checkpoint team/q1).
prefix_hits(scope, p, cp) if {
	q := scoped_prefix(scope, p, cp)
	some k in scoped_keys(scope, cp)
	startswith(k, q)
}

prefix_hits(scope, p, cp) if {
	q := scoped_prefix(scope, p, cp)
	some k in scoped_keys(scope, cp)
	startswith(q, k)
}

prefix_ok(scope, _) if count(object.get(scope, "prefixes", [])) == 0

prefix_ok(scope, cp) if {
	some p in scope.prefixes
	prefix_hits(scope, p, cp)
}

# Spark and ckgate never tag their objects nor set a custom time: a rule
# scoped by tags (S3 tags, Azure blob index) or needing such a property
# reaches no checkpoint file.
untagged(scope) if {
	count(object.get(scope, "tags", {})) == 0
	count(object.get(scope, "requires", [])) == 0
}

# Checkpoint files are written in the bucket's default class, as block blobs.
default_classes := {"STANDARD", "MULTI_REGIONAL", "REGIONAL", "DURABLE_REDUCED_AVAILABILITY"}

class_ok(scope) if count(object.get(scope, "storage_classes", [])) == 0

class_ok(scope) if {
	some c in scope.storage_classes
	upper(c) in default_classes
}

blob_type_ok(scope) if count(object.get(scope, "blob_types", [])) == 0

blob_type_ok(scope) if "blockBlob" in scope.blob_types

# covers: an enabled, readable rule whose scope reaches checkpoint cp.
# Suffix and size conditions are taken to reach it (checkpoint file names
# and sizes vary): the auditor errs towards a finding.
covers(r, cp) if {
	r.enabled
	object.get(r, "unreadable", "") == ""
	prefix_ok(r.scope, cp)
	untagged(r.scope)
	class_ok(r.scope)
	blob_type_ok(r.scope)
}

# hits lists {bucket, rule, action, cp} for every action of a rule that
# covers a checkpoint.
hits contains {"bucket": b, "rule": r, "action": a, "cp": cp} if {
	some b in input.buckets
	some cp in input.checkpoints
	applies(b, cp)
	some r in b.rules
	covers(r, cp)
	some a in r.actions
}

# when says when an action fires.
when(a) := sprintf("on %s", [a.date]) if object.get(a, "date", "") != ""

else := "as soon as newer versions exist" if object.get(a, "basis", "") == "newer_versions"

else := "1 day" if object.get(a, "age_days", 0) == 1

else := sprintf("%d days", [object.get(a, "age_days", 0)])

# rule_name names a lifecycle rule and where it came from.
rule_name(b, r) := sprintf("%q (%s)", [object.get(r, "id", ""), object.get(b, "source", "")])
