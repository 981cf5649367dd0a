package checkpoint

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// maxMissingPartitionsReported caps the missing partitions listed in the
// report (the findings name them all, as ranges).
const maxMissingPartitionsReported = 1024

// partitionsToCheck returns the partition ids to report for a store with
// n expected partitions, and reports missing and extra partitions.
func (in *inspector) partitionsToCheck(op *opIdx, st *storeIdx, n int, emptyOK map[int]bool) []int {
	present := slices.Sorted(maps.Keys(st.parts))
	dir := StoreDirKey(op.id, 0, st.name)
	if len(present) == 1 && present[0] == 0 && n > 1 {
		in.add(Finding{ID: FindingStateSinglePartition, Severity: SeverityInfo, Key: dir,
			Message: fmt.Sprintf("store %q has partition 0 only of %d: a single-partition operator (e.g. a global limit)", st.name, n)})
		return present
	}
	out := present
	if in.required > 0 && n > 0 {
		// missing ids: below the first present one, between present ones, up to n-1
		var missing []Range
		next := 0
		for _, id := range present {
			if id >= n {
				break
			}
			if id > next {
				missing = append(missing, Range{int64(next), int64(id - 1)})
			}
			next = id + 1
		}
		if next < n {
			missing = append(missing, Range{int64(next), int64(n - 1)})
		}
		// partitions the latest commit names with no state are not missing
		okIDs := slices.Sorted(maps.Keys(emptyOK))
		var really []Range
		for _, m := range missing {
			start := m[0]
			for _, id := range okIDs {
				if int64(id) < m[0] || int64(id) > m[1] {
					continue
				}
				if int64(id) > start {
					really = append(really, Range{start, int64(id) - 1})
				}
				out = append(out, id)
				start = int64(id) + 1
			}
			if start <= m[1] {
				really = append(really, Range{start, m[1]})
			}
		}
		missing = really
		total := int64(0)
		for _, m := range missing {
			total += m[1] - m[0] + 1
			in.add(Finding{ID: FindingStatePartitionMissing, Severity: SeverityError, Key: StoreDirKey(op.id, int(m[0]), st.name),
				Message: fmt.Sprintf("partitions %s of %d of store %q have no state files; a restart needs version %d", rangeText(m), n, st.name, in.required)})
		}
		if total <= maxMissingPartitionsReported {
			for _, m := range missing {
				for id := m[0]; id <= m[1]; id++ {
					out = append(out, int(id))
				}
			}
		}
	}
	for _, id := range present {
		if n > 0 && id >= n {
			in.add(Finding{ID: FindingStatePartitionExtra, Severity: SeverityWarning, Key: StoreDirKey(op.id, id, st.name),
				Message: fmt.Sprintf("partition %d is beyond the %d partitions the checkpoint records", id, n)})
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// newerAndUncommitted reports state versions beyond the required one
// (written by a batch that did not commit) and files whose unique id no
// commit names (failed or fenced attempts).
func (in *inspector) newerAndUncommitted(j *partJob, versions []int64) {
	p, R := j.part, in.required
	if in.L < 0 {
		return // reported as state-without-offsets
	}
	i, _ := slices.BinarySearch(versions, R+1)
	if newer := versions[i:]; len(newer) > 0 {
		sev := SeverityWarning
		why := "no batch that wrote them has offsets"
		if in.r.Status == StatusInFlight && len(newer) == 1 && newer[0] == R+1 {
			sev, why = SeverityInfo, fmt.Sprintf("written by the in-flight batch %d before it stopped; the re-run overwrites them", in.L)
		}
		in.add(Finding{ID: FindingStateNewerThanCommit, Severity: sev, Key: p.versions[newer[0]][0].Key,
			Message: fmt.Sprintf("store %q partition %d has versions %s beyond %d, the version a restart loads: %s",
				j.store.name, p.id, rangesText(ranges(newer)), R, why)})
	}
	var orphans []*entry
	if isTipName(j.uid) {
		// the tip is the partition's newest committed file: later files up
		// to R are attempts that did not commit
		tip, _ := ParseStateFileName(j.uid)
		lo, _ := slices.BinarySearch(versions, tip.Version)
		for _, v := range versions[min(lo, i):i] {
			for _, e := range p.versions[v] {
				if e.Key != p.dir+"/"+j.uid && e.file.UniqueID != "" && !slices.Contains(j.chain, e) {
					orphans = append(orphans, e)
				}
			}
		}
	}
	for v, uid := range j.committed {
		for _, e := range p.versions[v] {
			if e.file.UniqueID != "" && e.file.UniqueID != uid {
				orphans = append(orphans, e)
			}
		}
	}
	if j.uid != "" && !isTipName(j.uid) {
		if _, ok := j.committed[R]; !ok {
			for _, e := range p.versions[R] {
				if e.file.UniqueID != "" && e.file.UniqueID != j.uid {
					orphans = append(orphans, e)
				}
			}
		}
	}
	if len(orphans) > 0 {
		slices.SortFunc(orphans, func(a, b *entry) int { return cmp.Compare(a.Key, b.Key) })
		in.add(Finding{ID: FindingStateUncommitted, Severity: SeverityInfo, Key: orphans[0].Key,
			Message: fmt.Sprintf("%d state file(s) of store %q partition %d carry unique ids no commit names (failed or fenced attempts): they are not state", len(orphans), j.store.name, p.id)})
	}
}

func rangesText(rs []Range) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = rangeText(r)
	}
	return strings.Join(parts, ",")
}
