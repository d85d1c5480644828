package result

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/cpuset"
)

// Version is the schema of compare.json that Save writes and that the
// analysis and the report read. A file without one is version 0. Load
// brings a file of an earlier version to this one (upgrade), so that
// nothing past Load tells one version from another: a change to the
// schema that gives an absent field a meaning bumps Version and says here
// what an earlier file's absence means.
const Version = 4

// upgrade brings c, as read from raw, a file of version c.Version, to
// Version.
func (c *Comparison) upgrade(raw []byte) error {
	if c.Version > Version {
		return fmt.Errorf("written by a newer loadtest (schema version %d, this one reads up to %d): render it with that loadtest", c.Version, Version)
	}
	if c.Version < 4 {
		if err := c.upgradeFrom3(raw); err != nil {
			return err
		}
	}
	if c.Version < 1 {
		if err := c.upgradeFrom0(); err != nil {
			return err
		}
	}
	if c.Version < 2 && c.Plan != nil {
		// Before version 2 the pairs went with the searches of every
		// variant, which a quick queues comparison made too.
		if c.Options.Quick && c.Options.Preset == "queues" {
			c.Plan.SaturateAll = true
		}
		c.Plan.Paired = c.Plan.SaturateAll
	}
	if c.Version < 3 {
		c.upgradeMetaSizes()
	}
	c.Version = Version
	return nil
}

// criteria0 are the rules version 0's steps were judged by where its
// file did not record them: the saturation searches' 0.1 % errors and
// 90 % of the loader's CPUs.
var criteria0 = Criteria{MaxErrorRate: 0.001, LoaderBusy: 0.9}

// quickProbeBaseline0 is the probe before the overload step of a
// version-0 quick comparison that did not record its timing.
const quickProbeBaseline0 = time.Second

// upgradeFrom0 fills what a version-0 file left out with what its run
// did (options, step lengths, plan and criteria: its preset's defaults;
// -pin, the only pinning then: kvserver on CPU 0, the loader on 1), and
// restates what it recorded under rules since changed: a search without
// a bracket kept its last candidate as Rate, validated or not; CPU shares
// both 0 were not read; the loader's checks (restateMetaLoaderChecks,
// restateBacklogs). Fields 1 dropped are ignored by the decoder.
func (c *Comparison) upgradeFrom0() error {
	if c.Options.Preset == "" {
		c.Options = plan.DefaultOptions()
		c.Options.Preset = c.Preset
		c.Options.ApplyDefaults(false, false)
	}
	if c.Options.Timing == nil {
		t := c.Options.StepTiming()
		if c.Options.Quick {
			t.ProbeBaseline = quickProbeBaseline0
		}
		c.Options.Timing = &t
	}
	if e := &c.Env; e.Pinned && e.ServerCPUs == "" && e.LoaderCPUs == "" {
		e.ServerCPUs, e.LoaderCPUs = "0", "1"
	}
	if c.Plan == nil {
		var err error
		if c.Plan, err = plan.New(&c.Options, c.Env.ServerSize()); err != nil {
			return err
		}
	}
	if c.Criteria == (Criteria{}) {
		c.Criteria = criteria0
	}
	for _, w := range c.Workloads {
		for _, v := range w.Variants {
			for i := range v.Sat {
				upgradeSearch0(&v.Sat[i])
			}
		}
	}
	c.restateMetaLoaderChecks()
	c.restateBacklogs()
	return nil
}

func upgradeSearch0(s *SatRun) {
	if s.Bracket == nil && !s.Validated {
		s.Candidate, s.Rate = s.Rate, 0
	}
	for i := range s.Curve {
		if p := &s.Curve[i]; p.Loader.Share == 0 && p.Server.Share == 0 {
			p.Loader.Share, p.Server.Share = -1, -1
		}
	}
}

// restateMetaLoaderChecks restates the loader's checks of c's metastable
// runs that version 0 wrote against the base rate and with every attempt
// counted as sent (those not Scheduled): each from its run's totals,
// against the schedule's mean rate (its spike included), counting the
// first tries issued (sent, or refused by the client's own throttle) and
// not the retries. The k-th check of a model and variant is its k-th run.
func (c *Comparison) restateMetaLoaderChecks() {
	m := c.Metastable
	if m == nil || c.Plan == nil || c.Plan.Metastable == nil {
		return
	}
	t := c.Plan.Metastable.Timing
	planned := m.BaseRate*(t.Base+t.After).Seconds() + m.SpikeRate*t.Spike.Seconds()
	length := t.Duration().Seconds()
	if length <= 0 {
		return
	}
	runs := map[[2]string][]*MetaRun{} // by model and variant, in order
	for _, r := range m.Runs {
		k := [2]string{r.Model, r.Variant}
		runs[k] = append(runs[k], r)
	}
	for i := range c.Loader {
		l := &c.Loader[i]
		model, ok := strings.CutPrefix(l.Step, MetaStepPrefix)
		key := [2]string{model, l.Variant}
		if !ok || l.Scheduled || len(runs[key]) == 0 {
			continue
		}
		run := runs[key][0]
		runs[key] = runs[key][1:]
		issued, _ := IssuedOnSchedule(run.Totals.FirstTries, run.Totals.Throttled, int64(math.Round(planned)))
		l.Asked, l.SendRate, l.Scheduled = planned/length, float64(issued)/length, true
		l.KeptUp = float64(issued) >= 0.99*planned
		run.LoaderKeptUp = l.KeptUp
	}
}

// upgradeMetaSizes gives a metastable comparison of version 2 or
// earlier, whose runs all ran in front of the plan's store, that store
// as its one size, of every client model, at the rates recorded.
func (c *Comparison) upgradeMetaSizes() {
	m := c.Metastable
	if m == nil || c.Plan == nil || c.Plan.Metastable == nil {
		return
	}
	p := c.Plan.Metastable
	size := MetaSize{Slots: p.Slots(), Models: p.Models, BaseRate: m.BaseRate, SpikeRate: m.SpikeRate}
	for _, w := range c.Workloads {
		if w.Workload == m.Workload {
			size.Saturation = w.BaseRate
		}
	}
	m.Sizes = []MetaSize{size}
	for _, r := range m.Runs {
		r.Slots = size.Slots
	}
}

// restateBacklogs judges a version-0 comparison's fixed-rate steps and
// validations, which recorded no LoaderCheck.Backlog, as later ones are:
// a fixed-rate step the loader sent on schedule but that fell behind did
// so by its backlog; a validation whose search held it kept up. A failed
// validation stays as recorded: the record does not say why.
func (c *Comparison) restateBacklogs() {
	for i := range c.Loader {
		l := &c.Loader[i]
		if l.Backlog != "" {
			continue
		}
		v := c.variant(l.Workload, l.Variant)
		if v == nil {
			continue
		}
		switch {
		case l.Step == FixedStep && l.KeptUp && v.Fixed != nil:
			l.BacklogGrew(v.Fixed.Behind)
		case strings.HasSuffix(l.Step, ValidationSuffix):
			if p := v.lastValidation(l.Step); p != nil && p.Pass {
				l.KeptUp = true
			}
		}
	}
}

// variant is the variant named name of workload wl (nil: none).
func (c *Comparison) variant(wl, name string) *VariantResult {
	for _, w := range c.Workloads {
		if w.Workload != wl {
			continue
		}
		for _, v := range w.Variants {
			if v.Name == name {
				return v
			}
		}
	}
	return nil
}

// lastValidation is the last validating step of v's search whose loader
// check is named step (nil: none recorded): the run the check is of.
func (v *VariantResult) lastValidation(step string) *CurvePoint {
	for _, s := range v.Sat {
		if ValidationStep(s.Repeat) != step {
			continue
		}
		for i := len(s.Curve) - 1; i >= 0; i-- {
			if s.Curve[i].Phase == PhaseValidate {
				return &s.Curve[i]
			}
		}
	}
	return nil
}

// flatCPU is each side's CPU use as versions 3 and earlier spelled it,
// flat beside a step's own figures.
type flatCPU struct {
	LoaderShare, ServerShare float64
	LoaderCPUs, ServerCPUs   int
}

func (f flatCPU) set(loader, server *cpuset.Use) {
	*loader, *server = cpuset.Use{Share: f.LoaderShare, CPUs: f.LoaderCPUs}, cpuset.Use{Share: f.ServerShare, CPUs: f.ServerCPUs}
}

// upgradeFrom3 reads from raw, a file of version 3 or earlier, what it
// kept where later ones do not: each side's CPU use, flat in the
// searches' steps, the closed and paired rounds and the loader's checks;
// and the step plans, in its plan (Plan.Steps, one per workload that got
// that far, named by its workload), which move to their workloads'
// results.
func (c *Comparison) upgradeFrom3(raw []byte) error {
	var old struct {
		Plan struct {
			Steps []*struct {
				Workload string
				plan.Steps
			}
		}
		Workloads []struct {
			Variants []struct {
				Sat    []struct{ Curve []flatCPU }
				Closed struct{ Rounds []flatCPU }
				Paired struct{ Base, Variant []flatCPU }
			}
		}
		Loader []flatCPU
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return err
	}
	rounds := func(to []ClosedRound, from []flatCPU) {
		for i := range to {
			from[i].set(&to[i].Loader, &to[i].Server)
		}
	}
	for i, w := range c.Workloads {
		for j, v := range w.Variants {
			o := old.Workloads[i].Variants[j]
			for k, s := range v.Sat {
				for n := range s.Curve {
					o.Sat[k].Curve[n].set(&s.Curve[n].Loader, &s.Curve[n].Server)
				}
			}
			if v.Closed != nil {
				rounds(v.Closed.Rounds, o.Closed.Rounds)
			}
			if v.Paired != nil {
				rounds(v.Paired.Base, o.Paired.Base)
				rounds(v.Paired.Variant, o.Paired.Variant)
			}
		}
		for _, st := range old.Plan.Steps {
			if st.Workload == w.Workload {
				w.Steps = &st.Steps
			}
		}
	}
	for i := range c.Loader {
		old.Loader[i].set(&c.Loader[i].Loader, &c.Loader[i].Server)
	}
	return nil
}
