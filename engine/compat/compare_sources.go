package compat

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// How a change of the sources is classified: their count, kind, identity
// and options.

func (c *comparer) sources() {
	if c.unknown(RuleSourceCount, "sources", len(c.prop.Sources) > 0) {
		return
	}
	rs, ps := c.rec.Sources, c.prop.Sources
	if len(rs) != len(ps) {
		c.add(RuleSourceCount, "sources", strconv.Itoa(len(rs)), strconv.Itoa(len(ps)), NotAllowed,
			"changing the number of input sources is not allowed: Spark fails with \"There are [n] sources in the checkpoint offsets and now there are [m] sources\"")
		return
	}
	for i := range rs {
		c.source(fmt.Sprintf("sources[%d]", i), rs[i], ps[i])
	}
}

// recordedKinds is the set of kinds a recorded kind may stand for: Spark's
// offsets do not always say which source wrote them.
var recordedKinds = map[string][]string{
	"long": {"memory", "socket", "rate", "files", "text_socket"}, // LongOffset
}

func normKind(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	switch k {
	case "file", "parquet", "json", "csv", "text", "orc", "jsonl":
		return "files"
	case "foreachbatch", "foreach-batch":
		return "foreach_batch"
	case "textsocket":
		return "socket"
	}
	return k
}

func (c *comparer) source(f string, r, p Source) {
	rk, pk := normKind(r.Kind), normKind(p.Kind)
	switch {
	case rk == "" || rk == "none":
		c.skip(RuleSourceKind, f+".kind", "the checkpoint has no offset for this source yet: its kind is not recorded")
	case rk == pk:
	case slices.Contains(recordedKinds[rk], pk):
		// a long offset: consistent with the proposed kind
	case rk == "unknown":
		c.skip(RuleSourceKind, f+".kind", "the recorded offset is not one this tool decodes: compared by count only")
	default:
		c.add(RuleSourceKind, f+".kind", r.Kind, p.Kind, NotAllowed,
			"changing the type of an input source is not allowed: the recorded offsets belong to another source")
		return
	}
	c.sourceIdentity(f, r, p, pk)
	c.sourceOptions(f, r, p)
}

func (c *comparer) sourceIdentity(f string, r, p Source, kind string) {
	id := func(field, rec, prop, reason string) {
		if c.ckgate {
			reason += "; " + fmt.Sprintf(ckgateRefuses, "source")
		}
		c.add(RuleSourceIdentity, f+"."+field, orNone(rec), orNone(prop), NotAllowed, reason)
	}
	// Kafka: topics, pattern, topic ids, cluster
	if len(r.Topics) > 0 || r.TopicPattern != "" {
		switch {
		case p.TopicPattern != "" && p.TopicPattern == r.TopicPattern:
		case p.TopicPattern != "":
			re, err := regexp.Compile(p.TopicPattern)
			all := err == nil && len(r.Topics) > 0
			for _, t := range r.Topics {
				all = all && re.MatchString(t)
			}
			if all && !c.ckgate {
				c.add(RuleSourceIdentity, f+".topic_pattern", strings.Join(r.Topics, ","), p.TopicPattern, Undefined,
					"the pattern matches every recorded topic, whose offsets carry over; topics it matches later start from startingOffsets")
			} else {
				id("topic_pattern", strings.Join(r.Topics, ",")+r.TopicPattern, p.TopicPattern,
					"changing subscribed topics is not allowed: the pattern does not cover the recorded topics")
			}
		case len(p.Topics) == 0:
			c.skip(RuleSourceIdentity, f+".topics", "the proposal names no topics: the recorded ones are "+strings.Join(r.Topics, ","))
		case !sameSet(r.Topics, p.Topics):
			id("topics", strings.Join(sorted(r.Topics), ","), strings.Join(sorted(p.Topics), ","),
				"changing subscribed topics is not allowed: another topic is another source, even with the same schema")
		}
		for _, t := range sorted(slices.Collect(maps.Keys(r.TopicIDs))) {
			rid, pid := r.TopicIDs[t], p.TopicIDs[t]
			switch {
			case !slices.Contains(p.Topics, t) && p.TopicPattern == "":
			case pid == "":
				c.skip(RuleSourceIdentity, f+".topic_ids."+t, "the recorded topic id is "+rid+"; the proposal does not give one (ckgate compat --resolve asks the brokers)")
			case pid != rid:
				id("topic_ids."+t, rid, pid, "topic "+t+" was deleted and re-created (another topic id): it is another source, its offsets restart")
			}
		}
		switch {
		case r.ClusterID == "":
		case p.ClusterID == "":
			c.skip(RuleSourceIdentity, f+".cluster_id", "the recorded Kafka cluster id is "+r.ClusterID+"; the proposal does not give one (ckgate compat --resolve asks the brokers)")
		case p.ClusterID != r.ClusterID:
			id("cluster_id", r.ClusterID, p.ClusterID, "another Kafka cluster is another source: the recorded offsets mean nothing there")
		}
	}
	// Files, tables: path and table id
	sameTable := r.TableID != "" && r.TableID == p.TableID
	switch {
	case r.TableID == "":
	case p.TableID == "":
		c.skip(RuleSourceIdentity, f+".table_id", "the recorded table id is "+r.TableID+"; the proposal does not give one")
	case !sameTable:
		why := "another table id is another table, even at the same path with the same schema: its versions are unrelated to the recorded offsets"
		if kind == "delta" {
			why += " (Spark refuses the restart: DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE)"
		}
		id("table_id", r.TableID, p.TableID, why)
	}
	if r.Path != "" {
		switch {
		case p.Path == "":
			c.skip(RuleSourceIdentity, f+".path", "the recorded path is "+r.Path+"; the proposal does not give one")
		case samePath(r.Path, p.Path) || coversPath(p.Path, r.Path) && !c.ckgate && kind == "files":
		case sameTable:
			c.add(RuleSourceIdentity, f+".path", r.Path, p.Path, Allowed, "the same table (same table id) at another path")
		default:
			id("path", r.Path, p.Path, "changing the input path is not allowed: another path is another source, even with the same schema (the file source log lists files of the old path)")
		}
	}
	if r.Format != "" && p.Format != "" && !strings.EqualFold(r.Format, p.Format) {
		if c.ckgate {
			id("format", r.Format, p.Format, "the input format is part of the source's identity")
		} else {
			c.add(RuleSourceIdentity, f+".format", r.Format, p.Format, Undefined,
				"the same files read with another format: the files already read are not read again")
		}
	}
}

// Source options whose change Spark's docs allow, by kind of option.
var (
	rateLimitOptions = []string{"maxoffsetspertrigger", "minoffsetspertrigger", "maxtriggerdelay", "maxfilespertrigger",
		"maxbytespertrigger", "max_files_per_batch", "max_offsets_per_trigger", "max_rows_per_batch", "maxrecordspertrigger",
		"rowspermicrobatch", "total_rows"}
	startOptions = []string{"startingoffsets", "startingoffsetsbytimestamp", "startingtimestamp", "startingversion",
		"starting_offsets", "start", "start_ms", "latestfirst", "startingoffsetsbytimestampstrategy"}
	connectionOptions = []string{"kafka.bootstrap.servers", "brokers", "faildataloss", "failondataloss", "kafkaconsumer.polltimeoutms",
		"fetchoffset.numretries", "fetchoffset.retryintervalms", "groupidprefix", "kafka.group.id"}
	// ckgate's rate source records these in its identity.
	ckgateRateIdentity = []string{"rows_per_second", "keys"}
)

func (c *comparer) sourceOptions(f string, r, p Source) {
	if r.Options == nil && len(p.Options) > 0 && !c.ckgate {
		c.skip(RuleSourceOptions, f+".options", "Spark does not record source options")
		return
	}
	// a plan written before ckgate recorded the settings holds only the
	// options that identify the source
	oldCkgate := c.ckgate && !c.rec.known("source_options")
	var notRecorded []string
	for _, k := range UnionKeys(r.Options, p.Options) {
		rv, rok := r.Options[k]
		pv, pok := p.Options[k]
		if rok && pok && rv == pv {
			continue
		}
		if !rok && oldCkgate {
			notRecorded = append(notRecorded, k)
			continue
		}
		if !rok && r.Options == nil {
			continue // not recorded
		}
		lk := strings.ToLower(k)
		var class Class
		var reason string
		switch {
		case c.ckgate && slices.Contains(ckgateRateIdentity, lk):
			class, reason = NotAllowed, "the rate source's "+k+" fixes which row has which value and time; "+fmt.Sprintf(ckgateRefuses, "source")
		case !pok && c.ckgate && (lk == "start_ms" || lk == "start"):
			continue // the recorded start time is used whatever the spec says
		case lk == "start_ms" || lk == "start":
			class, reason = Allowed, "the recorded start time wins: the source reads it from the checkpoint"
		case slices.Contains(rateLimitOptions, lk):
			class, reason = Allowed, "adding, removing or changing a rate limit is allowed"
		case slices.Contains(startOptions, lk):
			class, reason = Allowed, "used only when the query starts without a checkpoint: a restart continues from the recorded offsets"
		case slices.Contains(connectionOptions, lk):
			class, reason = Allowed, "how the source connects or reacts to data loss, not which data it reads"
		default:
			class, reason = Undefined, "a change of source parameters: whether it is safe depends on the source"
		}
		c.add(RuleSourceOptions, f+".options."+k, optValue(rv, rok), optValue(pv, pok), class, reason)
	}
	if len(notRecorded) > 0 {
		c.skip(RuleSourceOptions, f+".options", c.rec.unknown["source_options"]+": "+strings.Join(notRecorded, ", "))
	}
}

func optValue(v string, ok bool) string {
	if !ok {
		return "(unset)"
	}
	return v
}
