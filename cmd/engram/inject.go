package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
)

func init() { register(newInject) }

func newInject(e *env) *cobra.Command {
	var f deliveryFlags
	var minRel float64
	c := &cobra.Command{
		Use:   "inject PROMPT",
		Short: "Print the memories relevant to a prompt, or nothing",
		Long: `Recall memories for a user prompt and print only those whose relevance clears
the bar (--min-relevance, 0 to 1; by default the embedding model's, measured
for it), within the character budget, formatted for direct insertion into an
LLM's context. A memory too long for its share of the budget is shown as an
excerpt, the passage that best matches the prompt, marked [excerpt of ID]. A
turn of a conversation (an episode) comes with the turns around it
(--neighbours), so an answer is shown with its question.
When nothing clears the bar it prints nothing and exits 0, so a host can run
it on every prompt. The words of PROMPT are joined; - reads the prompt from
stdin (up to 8 MB; one over 4 KB is reduced to its most telling terms). Each memory delivered counts as a use (--no-record: none). --json
always prints the injection object.`,
		Example: `  engram inject "how do we deploy to production?" --scope project=engram`,
		Args:    args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			fl, err := f.filter()
			if err != nil {
				return err
			}
			opt := engram.InjectOptions{Filter: fl, Budget: f.budget, Limit: f.limit, NoRecord: f.noRecord, Neighbours: f.neighbours}
			if f.neighbours == 0 && cmd.Flags().Changed("neighbours") {
				opt.Neighbours = -1 // none, not the default
			}
			if cmd.Flags().Changed("min-relevance") {
				if minRel < 0 || minRel > 1 {
					return usagef("--min-relevance %g: want 0 to 1", minRel)
				}
				opt.MinRelevance = &minRel
			}
			prompt := strings.Join(a, " ")
			if len(a) == 1 && prompt == "-" {
				b, err := io.ReadAll(io.LimitReader(e.stdin, maxPrompt+1))
				if err != nil {
					return fmt.Errorf("read prompt: %w", err)
				}
				if len(b) > maxPrompt {
					return usagef("prompt on stdin is longer than %d bytes", maxPrompt)
				}
				prompt = string(b)
			}
			if strings.TrimSpace(prompt) == "" {
				return usagef("inject: the prompt is empty")
			}
			e.firstQuery = prompt
			return e.withStore(cmd.Context(), func(db store) error {
				inj, err := db.Inject(cmd.Context(), prompt, opt)
				if err != nil {
					return err
				}
				return e.out(inj, func(w io.Writer) error {
					_, err := io.WriteString(w, inj.Text)
					return err
				})
			})
		},
	}
	f.register(c, engram.DefaultInjectBudget)
	c.Flags().IntVar(&f.limit, "limit", engram.DefaultInjectLimit, "memories at most")
	c.Flags().Float64Var(&minRel, "min-relevance", 0, "relevance bar (0–1) a memory must clear (default: the embedding model's)")
	c.Flags().IntVar(&f.neighbours, "neighbours", engram.DefaultInjectNeighbours, "show each memory of an episode with this many turns before and after it (0: none)")
	return viaDaemon(c)
}

// maxPrompt bounds a prompt read from stdin.
const maxPrompt = maxHookInput // 8 MB, as a hook reads: a long prompt is reduced, not refused
