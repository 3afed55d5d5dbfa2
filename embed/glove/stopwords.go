package glove

// stopwords are the English function words that Mean pooling drops: articles,
// pronouns, auxiliaries, prepositions, conjunctions and the pieces that
// contractions split into ("don't" → "don", "t"). Changing this list changes
// Mean vectors: bump Revision.
var stopwords = func() map[string]struct{} {
	m := make(map[string]struct{}, len(stopwordList))
	for _, w := range stopwordList {
		m[w] = struct{}{}
	}
	return m
}()

var stopwordList = []string{
	"a", "about", "above", "after", "again", "against", "ain", "all", "am", "an", "and", "any",
	"are", "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between",
	"both", "but", "by", "can", "couldn", "d", "did", "didn", "do", "does", "doesn", "doing",
	"don", "down", "during", "each", "few", "for", "from", "further", "had", "hadn", "has",
	"hasn", "have", "haven", "having", "he", "her", "here", "hers", "herself", "him",
	"himself", "his", "how", "i", "if", "in", "into", "is", "isn", "it", "its", "itself",
	"just", "ll", "m", "ma", "me", "mightn", "more", "most", "mustn", "my", "myself", "needn",
	"no", "nor", "not", "now", "o", "of", "off", "on", "once", "only", "or", "other", "our",
	"ours", "ourselves", "out", "over", "own", "re", "s", "same", "shan", "she", "should",
	"shouldn", "so", "some", "such", "t", "than", "that", "the", "their", "theirs", "them",
	"themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
	"under", "until", "up", "ve", "very", "was", "wasn", "we", "were", "weren", "what", "when",
	"where", "which", "while", "who", "whom", "why", "will", "with", "won", "wouldn", "y",
	"you", "your", "yours", "yourself", "yourselves", "would", "could", "also", "may", "might",
	"must", "shall", "us", "yet",
}

// isStopword reports whether Mean pooling drops word (lower-case).
func isStopword(word string) bool {
	_, ok := stopwords[word]
	return ok
}
