package checkpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// decodedFile is what reading one state file gave.
type decodedFile struct {
	counts    *RecordCounts
	changelog *Changelog
	zip       *RocksDBSnapshot
	ckgate    *CkgateStateHeader
	err       error // the content is unusable (corrupt, truncated, newer version, unreadable)
	checksums checksumResult
	note      string
}

// partJob is the analysis of one partition of one store.
type partJob struct {
	store *storeIdx
	part  *partIdx
	rep   *PartitionReport
	// named: commits/C has an entry for this partition; uid is it: the
	// unique id of the required version (Spark's checkpoint v2), or the file
	// name of the partition's newest file (ckgate's tip; "" = empty state).
	named bool
	uid   string
	// committed maps versions to the unique id a detailed commit names.
	committed map[int64]string
	chain     []*entry // the rebuild chain, once known
}

// analyseState reports operators, stores and partitions, and checks that
// the version a restart loads can be rebuilt in every partition.
func (in *inspector) analyseState(ctx context.Context) error {
	x, R := in.idx, in.required
	confParts, _ := strconv.Atoi(in.r.Confs[ConfShufflePartitions])
	var latestIDs map[int64][][]string
	if c := in.commits[in.C]; c != nil {
		latestIDs = c.StateUniqueIDs
	}
	var jobs []*partJob
	for _, opID := range sortedKeys(x.ops) {
		op := x.ops[opID]
		meta := in.opMeta[opID]
		rep := Operator{ID: opID, Provider: in.provider(op), Files: op.files, Bytes: op.bytes, Stores: []StoreReport{}}
		numOp, opErr := strconv.ParseInt(opID, 10, 64)
		if opErr != nil {
			numOp = -1
		}
		names := storeOrder(op, meta)
		n := confParts
		if meta != nil {
			rep.Name, rep.MetadataVersion = meta.OperatorName, meta.Version
			metaN := 0
			for _, s := range meta.Stores {
				metaN = max(metaN, s.NumPartitions)
				if confParts > 0 && s.NumPartitions > 0 && s.NumPartitions != confParts {
					in.add(Finding{ID: FindingPartitionsMismatch, Severity: SeverityWarning, Key: opMetaKey(op),
						Message: fmt.Sprintf("store %q records %d partitions, the offset log %d", s.Name, s.NumPartitions, confParts)})
				}
			}
			if n == 0 {
				n = metaN
			}
		}
		if n == 0 {
			for _, s := range op.stores {
				for id := range s.parts {
					n = max(n, id+1)
				}
			}
		}
		rep.NumPartitions = n
		in.r.StateBytes += op.bytes
		for si, name := range names {
			st := op.stores[name]
			if st == nil {
				st = &storeIdx{name: name, parts: map[int]*partIdx{}}
			}
			srep := StoreReport{Name: name, Partitions: []PartitionReport{}}
			if s := in.schemas[opID][name]; s != nil {
				srep.SchemaVersion, srep.Schema = s.Version, s.ColumnFamilies
			}
			emptyOK := map[int]bool{}
			if ids, ok := latestIDs[numOp]; ok {
				for pid, files := range ids {
					if si >= len(files) {
						emptyOK[pid] = true
					}
				}
			}
			parts := in.partitionsToCheck(op, st, n, emptyOK)
			srep.Partitions = make([]PartitionReport, len(parts))
			for i, pid := range parts {
				p := st.parts[pid]
				if p == nil {
					p = &partIdx{id: pid, dir: StoreDirKey(opID, pid, name), versions: map[int64][]*entry{}, aux: map[string]*entry{}, minV: -1, maxV: -1}
				}
				srep.Partitions[i] = PartitionReport{ID: pid}
				j := &partJob{store: st, part: p, rep: &srep.Partitions[i], committed: map[int64]string{}}
				if ids, ok := latestIDs[numOp]; ok && pid < len(ids) {
					j.named = true
					if si < len(ids[pid]) {
						j.uid = ids[pid][si]
					}
				}
				for b, c := range in.commits {
					if ids, ok := c.StateUniqueIDs[numOp]; ok && pid < len(ids) && si < len(ids[pid]) && !isTipName(ids[pid][si]) {
						j.committed[b+1] = ids[pid][si]
					}
				}
				jobs = append(jobs, j)
			}
			rep.Stores = append(rep.Stores, srep)
		}
		in.r.Operators = append(in.r.Operators, rep)
	}
	for op := range latestIDs {
		if x.ops[strconv.FormatInt(op, 10)] == nil && R > 0 {
			in.add(Finding{ID: FindingStateMissing, Severity: SeverityError, Key: StateDir + "/" + strconv.FormatInt(op, 10),
				Message: fmt.Sprintf("commits/%d names state of operator %d, which has no state directory", in.C, op)})
		}
	}
	tasks := make([]func(context.Context) error, len(jobs))
	for i, j := range jobs {
		tasks[i] = func(ctx context.Context) error { return in.analysePartition(ctx, j) }
	}
	if err := runAll(ctx, in.o.Concurrency, tasks); err != nil {
		return err
	}
	for i := range in.r.Operators {
		for k := range in.r.Operators[i].Stores {
			s := &in.r.Operators[i].Stores[k]
			s.Rebuildable = true
			for _, p := range s.Partitions {
				s.Rebuildable = s.Rebuildable && p.Rebuildable
			}
		}
	}
	for _, op := range x.ops {
		for _, s := range op.stores {
			for _, p := range s.parts {
				for _, es := range p.versions {
					for _, e := range es {
						if e.file.UniqueID != "" {
							in.r.Format.CheckpointFormat = 2
						}
					}
				}
			}
		}
	}
	return nil
}

func opMetaKey(op *opIdx) string {
	if op.metaV1 != nil {
		return op.metaV1.Key
	}
	ids := sortedIDs(op.metaV2)
	if len(ids) > 0 {
		return op.metaV2[ids[len(ids)-1]].Key
	}
	return StateDir + "/" + op.id
}

// storeOrder lists an operator's stores: the operator metadata's order
// (which is the order of stateUniqueIds in commits), then any other store
// found on disk, by name.
func storeOrder(op *opIdx, meta *OperatorMetadata) []string {
	var names []string
	seen := map[string]bool{}
	if meta != nil {
		for _, s := range meta.Stores {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
	}
	var rest []string
	for name := range op.stores {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// provider tells the state store provider from the files, else the conf.
func (in *inspector) provider(op *opIdx) string {
	for _, s := range op.stores {
		for _, p := range s.parts {
			for _, es := range p.versions {
				for _, e := range es {
					switch e.file.Kind {
					case KindDelta, KindSnapshot:
						return ProviderHDFS
					case KindZip, KindChangelog:
						return ProviderRocksDB
					}
				}
			}
		}
	}
	switch c := in.r.Confs[ConfProviderClass]; {
	case strings.Contains(c, "RocksDB"):
		return ProviderRocksDB
	case strings.Contains(c, "HDFSBacked"):
		return ProviderHDFS
	}
	return ProviderUnknown
}

// analysePartition decodes the latest versions of one partition and
// checks the rebuild chain of the required version.
func (in *inspector) analysePartition(ctx context.Context, j *partJob) error {
	p, rep, R := j.part, j.rep, in.required
	versions := sortedIDs(p.versions)
	rep.Versions = ranges(versions)
	rep.LatestVersion = p.maxV
	rep.Files, rep.Bytes = p.files, p.bytes
	rep.RequiredVersion = R
	for _, v := range versions {
		for _, e := range p.versions[v] {
			if e.file.IsBase() {
				rep.Snapshots++
				lv := v
				rep.LatestSnapshot = &lv
				break
			}
		}
	}

	decoded := map[*entry]*decodedFile{}
	var fatal error
	decode := func(e *entry) *decodedFile {
		if d, ok := decoded[e]; ok {
			return d
		}
		d, err := in.decodeStateFile(ctx, e)
		if err != nil {
			fatal = err
			d = &decodedFile{note: "not read: " + err.Error()}
		}
		decoded[e] = d
		return d
	}
	if k := in.o.MaxStateVersions; k > 0 {
		for _, v := range versions[max(0, len(versions)-k):] {
			for _, e := range p.versions[v] {
				decode(e)
			}
		}
	}
	if fatal != nil {
		return fatal
	}
	ch := in.rebuildChain(j, versions, decode)
	if fatal != nil {
		return fatal
	}
	j.chain = ch.files
	// decode the base and the latest changes of the chain
	inChain := map[*entry]bool{}
	for i, e := range ch.files {
		inChain[e] = true
		if i == 0 || i >= len(ch.files)-max(in.o.MaxStateVersions, 1) {
			decode(e)
		}
	}
	if fatal != nil {
		return fatal
	}
	for i, e := range ch.files {
		if ch.problem != "" {
			break
		}
		d := decoded[e]
		switch {
		case e.Size == 0:
			ch.problem = fmt.Sprintf("%s is empty", e.Key)
		case d == nil:
		case d.err != nil:
			ch.problem = fmt.Sprintf("%s cannot be read: %v", e.Key, d.err)
		case d.checksums.spark != nil:
			ch.problem = fmt.Sprintf("%s %v", e.Key, d.checksums.spark)
		case i == 0 && d.zip != nil:
			ch.problem = missingRocksDBFiles(p, d.zip)
		}
	}
	if R > 0 {
		from := ch.from
		rep.RebuildFrom = &from
	}
	rep.RebuildFiles = len(ch.files)
	rep.RebuildKeys = rebuildKeys(p, ch.files, decoded)
	rep.Rebuildable = ch.problem == ""
	rep.Problem = ch.problem
	emptyByCommit := j.named && j.uid == ""
	switch {
	case p.files == 0 && R > 0 && !emptyByCommit:
		// reported as state-partition-missing
		rep.Rebuildable, rep.Problem = false, "no state files"
	case ch.problem != "":
		in.add(Finding{ID: FindingStateUnrebuildable, Severity: SeverityError, Key: p.dir,
			Message: fmt.Sprintf("state version %d of store %q partition %d cannot be rebuilt: %s", R, j.store.name, p.id, ch.problem)})
	}

	// findings about decoded files, and the details
	for e, d := range decoded {
		sev := SeverityWarning
		if inChain[e] {
			sev = SeverityError
		}
		if d.err != nil {
			in.fail(e, sev, "state file", d.err)
		}
		in.reportChecksums(e.Key, sev, d.checksums)
		rep.Details = append(rep.Details, detailOf(e, d))
	}
	slices.SortFunc(rep.Details, func(a, b VersionDetail) int {
		return cmp.Or(cmp.Compare(a.Version, b.Version), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Key, b.Key))
	})
	in.newerAndUncommitted(j, versions)
	return nil
}

// decodeStateFile reads and decodes one state file. The error is only for
// a ctx that ended.
func (in *inspector) decodeStateFile(ctx context.Context, e *entry) (*decodedFile, error) {
	d := &decodedFile{}
	if e.Size == 0 {
		d.err = truncatedf("empty file")
		return d, nil
	}
	if e.Size > in.o.MaxDecodeBytes {
		d.note = fmt.Sprintf("not decoded: %d bytes, above the %d-byte limit", e.Size, in.o.MaxDecodeBytes)
		return d, nil
	}
	data, _, err := gateway.GetBounded(ctx, in.st, e.Key, in.o.MaxDecodeBytes)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		d.err = err
		return d, nil
	}
	if d.checksums, err = in.verifyChecksums(ctx, e, data); err != nil {
		return nil, err
	}
	if IsCkgateState(data) {
		h, c, err := DecodeCkgateState(data)
		d.err = err
		if err == nil {
			d.ckgate, d.counts = &h, &c
		}
		return d, nil
	}
	if in.r.Writer.Kind == WriterCkgate && e.file.Kind != KindZip && !IsLZ4Block(data) {
		d.note = "ckgate state encoding: not decoded"
		return d, nil
	}
	codec := in.r.Confs[ConfCompressionCodec]
	switch e.file.Kind {
	case KindDelta:
		c, err := CountDelta(codec, data, in.o.MaxDecodeBytes)
		d.counts, d.err = &c, err
	case KindSnapshot:
		c, err := CountSnapshot(codec, data, in.o.MaxDecodeBytes)
		d.counts, d.err = &c, err
	case KindChangelog:
		cl, err := DecodeChangelog(codec, data, in.o.MaxDecodeBytes)
		d.changelog, d.err = cl, err
		if cl != nil {
			d.counts = &cl.Counts
		}
	case KindZip:
		d.zip, d.err = DecodeRocksDBZip(data)
	}
	switch {
	case errors.Is(d.err, ErrTooLarge):
		d.note, d.err, d.counts = "not decoded: "+d.err.Error(), nil, nil
	case errors.Is(d.err, ErrUnsupportedCodec):
		d.note, d.counts = d.err.Error(), nil
		in.mu.Lock()
		key := StateDir + "/" + e.op
		if !in.flagged[key] {
			in.flagged[key] = true
			in.findings = append(in.findings, Finding{ID: FindingUnsupportedCodec, Severity: SeverityWarning, Key: key,
				Message: fmt.Sprintf("state files use codec %q: puts/deletes are not counted and the files are not checked", NormalizeCodec(codec))})
		}
		in.mu.Unlock()
		d.err = nil
	case d.err != nil:
		d.counts = nil
	}
	return d, nil
}

func detailOf(e *entry, d *decodedFile) VersionDetail {
	vd := VersionDetail{Version: e.file.Version, Kind: e.file.Kind, UniqueID: e.file.UniqueID, Key: e.Key, Bytes: e.Size, Note: d.note}
	if d.counts != nil {
		p, del := d.counts.Puts, d.counts.Deletes
		vd.Puts, vd.Deletes = &p, &del
		if d.counts.Merges > 0 {
			m := d.counts.Merges
			vd.Merges = &m
		}
	}
	if d.changelog != nil {
		vd.Changelog = d.changelog.Version
	}
	if d.zip != nil {
		nk, n := d.zip.Metadata.NumKeys, len(d.zip.Metadata.SSTFiles)
		vd.NumKeys, vd.SSTFiles = &nk, &n
	}
	if d.err != nil {
		vd.Note = d.err.Error()
	}
	return vd
}
