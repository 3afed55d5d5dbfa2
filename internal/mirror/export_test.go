package mirror

// Hooks for the external tests of this package.

// SnapshotSetting is the settings key of the snapshot stamp.
const SnapshotSetting = snapshotSetting

// SnapshotStamp is what the database records about the snapshot it trusts.
type SnapshotStamp = snapshotStamp

// SetReplayFloor lowers the replay length that makes a snapshot worth
// rewriting, until the returned func restores it.
func SetReplayFloor(n int) (restore func()) {
	old := snapshotReplayFloor
	snapshotReplayFloor = n
	return func() { snapshotReplayFloor = old }
}
