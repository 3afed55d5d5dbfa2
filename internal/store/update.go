package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/engram-memory/engram/memory"
)

// Updated is what Update wrote: the memory as stored now, the key it had
// before (differing from Memory.Key() when the update moved it to another
// scope), and the change-log sequence numbers the write took, first to last
// (0, 0 when fn left the memory as it was).
type Updated struct {
	Memory      *memory.Memory
	OldKey      string
	First, Last int64
}

// Update reads the memory id names in scope (nil for the whole store) and
// stores what fn makes of it, in one write transaction, so no other write can
// come between the read and the write (no lost update, no deleted memory
// brought back). fn gets the stored memory, which it may change and return,
// or return nil to leave the store as it is; its error aborts the update. fn
// runs while the store's write lock is held: it must not wait for anything.
// The memory fn returns must lie inside scope; a memory it moves to a scope
// where its id is taken is refused (wrapping memory.ErrInvalid). A missing id
// is memory.ErrNotFound; an ambiguous one memory.ErrAmbiguous.
func (s *Store) Update(ctx context.Context, scope map[string]string, id string, fn func(*memory.Memory) (*memory.Memory, error)) (Updated, error) {
	var out Updated
	err := s.write(ctx, func(tx *sql.Tx) error {
		out = Updated{}
		rowScope, ok, err := s.resolve(ctx, tx, id, scope)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
		}
		old, bad, err := readOne(ctx, tx, `SELECT `+memoryColumns+` FROM memories WHERE id = ? AND scope = ?`, id, rowScope)
		if err != nil {
			return fmt.Errorf("read memory %s: %w", id, err)
		}
		s.rowsRead.Add(1)
		if old == nil && bad == nil {
			return fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
		}
		if old == nil {
			return fmt.Errorf("memory %s: %w: the stored row cannot be read (%s); engram doctor explains", id, memory.ErrInvalid, bad.Problem)
		}
		out.OldKey = old.Key()
		m, err := fn(old)
		if err != nil || m == nil {
			out.Memory = old
			return err
		}
		if m.ID != id {
			return fmt.Errorf("%w: an update may not change the id (%s to %s)", memory.ErrInvalid, id, m.ID)
		}
		if !memory.Inside(m.Scope, scope) {
			return fmt.Errorf("%w: memory %s: scope %s lies outside %s", memory.ErrInvalid, id, memory.ScopeJSON(m.Scope), memory.ScopeJSON(scope))
		}
		args, err := rowArgs(m)
		if err != nil {
			return fmt.Errorf("memory %s: %w", id, err)
		}
		newScope := args[6].(string)
		if newScope != rowScope {
			var taken int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE id = ? AND scope = ?`, id, newScope).Scan(&taken); err != nil {
				return fmt.Errorf("read memory %s: %w", id, err)
			}
			if taken > 0 {
				return fmt.Errorf("%w: memory %s cannot move to scope %s: a memory with its id is already there", memory.ErrInvalid, id, newScope)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE id = ? AND scope = ?`, id, rowScope); err != nil {
				return fmt.Errorf("move memory %s: %w", id, err)
			}
			if out.First, err = logChange(ctx, tx, id, rowScope, OpDelete); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO memories (`+writeColumns+`) VALUES `+writePlaceholders, args...); err != nil {
			return fmt.Errorf("store memory %s: %w", id, err)
		}
		if out.Last, err = logChange(ctx, tx, id, newScope, OpPut); err != nil {
			return err
		}
		if out.First == 0 {
			out.First = out.Last
		}
		out.Memory = m
		return nil
	})
	if err != nil {
		return Updated{}, err
	}
	return out, nil
}
