package tokenize

import "strings"

// stopwordList is the standard Snowball English stopword list, plus the common
// contractions as this tokenizer spells them: apostrophes are removed inside a word
// ("don't" → dont) and a final "'s" is cut ("it's" → it). Contractions that spell
// another word (i'd → id, i'll → ill, we'll → well, she'll → shell) are left out.
const stopwordList = `
a about above after again against all am an and any are as at
be because been before being below between both but by
can did do does doing don down during each few for from further
had has have having he her here hers herself him himself his how
i if in into is it its itself just me more most my myself
no nor not now of off on once only or other our ours ourselves out over own
s same she should so some such t than that the their theirs them themselves
then there these they this those through to too under until up very
was we were what when where which while who whom why will with
you your yours yourself yourselves
arent cant couldnt didnt doesnt dont hadnt hasnt havent isnt mightnt mustnt
neednt shant shouldnt wasnt werent wont wouldnt
im ive youd youll youre youve hes shes theyd theyll theyre theyve weve
shouldve couldve wouldve thatll`

// stopwords is stopwordList as a set.
var stopwords = func() map[string]struct{} {
	f := strings.Fields(stopwordList)
	m := make(map[string]struct{}, len(f))
	for _, w := range f {
		m[w] = struct{}{}
	}
	return m
}()

// isStopword reports whether the folded word w is an English stopword.
func isStopword(w string) bool {
	_, ok := stopwords[w]
	return ok
}
