package deploy

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// observabilityDoc holds the runbook every alert links to.
const observabilityDoc = "../docs/observability.md"

// Every alert says how long the state must hold, how bad it is, what it
// means, and where its runbook is: a section that exists.
func TestAlertsCarryWhatOperatorsNeed(t *testing.T) {
	doc, err := os.ReadFile(observabilityDoc)
	require.NoError(t, err)
	anchors := headingAnchors(string(doc))
	for _, r := range loadRules(t) {
		if r.Alert == "" {
			continue
		}
		assert.GreaterOrEqual(t, time.Duration(r.For), time.Minute, "%s: for", r.Alert)
		assert.Contains(t, []string{"warning", "critical"}, r.Labels["severity"], "%s: severity", r.Alert)
		assert.NotEmpty(t, r.Annotations["summary"], "%s: summary", r.Alert)
		assert.NotEmpty(t, r.Annotations["description"], "%s: description", r.Alert)
		runbook, ok := strings.CutPrefix(r.Annotations["runbook"], "docs/observability.md#")
		if assert.True(t, ok, "%s: runbook %q is not a section of docs/observability.md", r.Alert, r.Annotations["runbook"]) {
			assert.True(t, anchors[runbook], "%s: docs/observability.md has no section #%s", r.Alert, runbook)
		}
	}
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown
// document: lower case, spaces to hyphens, other punctuation dropped.
func headingAnchors(doc string) map[string]bool {
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	anchors := map[string]bool{}
	for line := range strings.Lines(doc) {
		if title, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "#"); ok {
			title = strings.TrimSpace(strings.TrimLeft(title, "#"))
			anchors[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(title), ""), " ", "-")] = true
		}
	}
	return anchors
}

func TestHeadingAnchors(t *testing.T) {
	a := headingAnchors("# Observability\n## Alerts and runbooks\n### KVServerShedding\n#### `make observe`: the stack\n")
	assert.Equal(t, map[string]bool{"observability": true, "alerts-and-runbooks": true, "kvservershedding": true, "make-observe-the-stack": true}, a)
}

// promtool, Prometheus' own checker, accepts the rules and the scrape
// configuration, where it is installed.
func TestPromtoolAccepts(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not on PATH (Debian: apt-get install prometheus); the rules are still checked with Prometheus' Go rule checker")
	}
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"check", "config", "prometheus/prometheus.yml"}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		assert.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// The scrape configuration make observe uses scrapes make run's kvserver
// often enough to see a retry storm build, and loads the rules.
func TestScrapeConfig(t *testing.T) {
	b, err := os.ReadFile("prometheus/prometheus.yml")
	require.NoError(t, err)
	var cfg struct {
		Global struct {
			ScrapeInterval string `yaml:"scrape_interval"`
		} `yaml:"global"`
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	require.NoError(t, yaml.Unmarshal(b, &cfg))
	every, err := time.ParseDuration(cfg.Global.ScrapeInterval)
	require.NoError(t, err)
	assert.True(t, every >= time.Second && every <= 5*time.Second, "scrape_interval %s", every)
	assert.Equal(t, []string{"kvserver-rules.yml"}, cfg.RuleFiles, "relative to prometheus.yml")
	require.Len(t, cfg.ScrapeConfigs, 1)
	require.Len(t, cfg.ScrapeConfigs[0].StaticConfigs, 1)
	assert.Equal(t, []string{"127.0.0.1:19234"}, cfg.ScrapeConfigs[0].StaticConfigs[0].Targets, "make run's address")
}
