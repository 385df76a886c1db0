package abgate

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Category is one scored BFCL v4 test category.
type Category struct {
	Name string
	// Group is the directory between the model directory and the file, as
	// BFCL's get_directory_structure_by_category builds it: "non_live",
	// "live", "multi_turn", "agentic" or "agentic/memory/<backend>".
	Group string
	// Size is the number of entries of bfcl_eval/data/BFCL_v4_<name>.json
	// (bfcl-eval 2026.3.23); a complete result file has exactly this many
	// rows.
	Size int
}

// categories lists every scored BFCL v4 category in BFCL's own order
// (ALL_CATEGORIES in bfcl_eval/constants/category_mapping.py).
var categories = []Category{
	{"simple_python", "non_live", 400},
	{"simple_java", "non_live", 100},
	{"simple_javascript", "non_live", 50},
	{"multiple", "non_live", 200},
	{"parallel", "non_live", 200},
	{"parallel_multiple", "non_live", 200},
	{"irrelevance", "non_live", 240},
	{"live_simple", "live", 258},
	{"live_multiple", "live", 1053},
	{"live_parallel", "live", 16},
	{"live_parallel_multiple", "live", 24},
	{"live_irrelevance", "live", 884},
	{"live_relevance", "live", 16},
	{"multi_turn_base", "multi_turn", 200},
	{"multi_turn_miss_func", "multi_turn", 200},
	{"multi_turn_miss_param", "multi_turn", 200},
	{"multi_turn_long_context", "multi_turn", 200},
	{"memory_kv", "agentic/memory/kv", 155},
	{"memory_vector", "agentic/memory/vector", 155},
	{"memory_rec_sum", "agentic/memory/rec_sum", 155},
	{"web_search_base", "agentic", 100},
	{"web_search_no_snippet", "agentic", 100},
}

// collections are the collection names "bfcl evaluate --test-category"
// accepts (TEST_COLLECTION_MAPPING), each a list of category names or
// other collections.
var collections = map[string][]string{
	"all":         {"single_turn", "multi_turn", "agentic"},
	"all_scoring": {"all"},
	"single_turn": {"non_live", "live"},
	"non_live":    {"simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple", "irrelevance"},
	"live":        {"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance"},
	"multi_turn":  {"multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"},
	"non_python":  {"simple_java", "simple_javascript"},
	"python": {"simple_python", "irrelevance", "parallel", "multiple", "parallel_multiple",
		"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance"},
	"memory":     {"memory_kv", "memory_vector", "memory_rec_sum"},
	"web_search": {"web_search_base", "web_search_no_snippet"},
	"agentic":    {"memory", "web_search"},
}

// LookupCategory returns the scored category called name.
func LookupCategory(name string) (Category, bool) {
	i := slices.IndexFunc(categories, func(c Category) bool { return c.Name == name })
	if i < 0 {
		return Category{}, false
	}
	return categories[i], true
}

// ExpandCategories turns the names given to --categories into the scored
// categories they mean, in the order given, each once. A collection name
// expands to its members as bfcl evaluate does (BFCL writes no score file
// for a collection: "multi_turn" is its four children). Any other name,
// such as the v3 name "simple", is an error naming the accepted ones.
func ExpandCategories(names []string) ([]Category, error) {
	var out []Category
	seen := map[string]bool{}
	var add func(name string, depth int) error
	add = func(name string, depth int) error {
		if members, ok := collections[name]; ok && depth < 4 {
			for _, m := range members {
				if err := add(m, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		c, ok := LookupCategory(name)
		if !ok {
			return fmt.Errorf("category %q is not a BFCL v4 category or collection: want one of %s, or a collection (%s)",
				name, strings.Join(CategoryNames(), ", "), strings.Join(collectionNames(), ", "))
		}
		if !seen[c.Name] {
			seen[c.Name] = true
			out = append(out, c)
		}
		return nil
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if err := add(n, 0); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no categories given: want a comma list such as multiple,parallel or a collection such as multi_turn")
	}
	return out, nil
}

// CategoryNames lists the scored BFCL v4 categories in BFCL's order.
func CategoryNames() []string {
	names := make([]string, len(categories))
	for i, c := range categories {
		names[i] = c.Name
	}
	return names
}

func collectionNames() []string {
	names := make([]string, 0, len(collections))
	for n := range collections {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ModelDir is the directory name BFCL uses for a registry name: every "/"
// becomes "_".
func ModelDir(model string) string { return strings.ReplaceAll(model, "/", "_") }

// ResultPath is the exact result file of category c under a
// BFCL_PROJECT_ROOT, relative to the root.
func ResultPath(model string, c Category) string {
	return path.Join("result", ModelDir(model), c.Group, "BFCL_v4_"+c.Name+"_result.json")
}

// ScorePath is the exact score file of category c under a
// BFCL_PROJECT_ROOT, relative to the root.
func ScorePath(model string, c Category) string {
	return path.Join("score", ModelDir(model), c.Group, "BFCL_v4_"+c.Name+"_score.json")
}
