package policy

// DeltaTableInfo is what the audit needs of one Delta table a checkpoint
// may read (AuditOptions.DeltaTables): its id, which a checkpoint's Delta
// source records as reservoirId, and its retention properties.
type DeltaTableInfo struct {
	URL string `json:"url"`
	ID  string `json:"id"`
	// LatestVersion and Commits: the newest version and how many commit
	// files the log holds.
	LatestVersion int64 `json:"latest_version"`
	Commits       int   `json:"commits"`
	// LogRetentionHours is delta.logRetentionDuration,
	// DeletedFileRetentionHours delta.deletedFileRetentionDuration (what
	// VACUUM keeps), in hours; LogCleanup delta.enableExpiredLogCleanup.
	LogRetentionHours         float64 `json:"log_retention_hours"`
	DeletedFileRetentionHours float64 `json:"deleted_file_retention_hours"`
	LogCleanup                bool    `json:"log_cleanup"`
	// Growing: the table took a commit within its log retention (it is
	// written to).
	Growing bool `json:"growing"`
	// Error says why the table could not be read (an unknown finding).
	Error string `json:"error,omitempty"`
}
