//! The text index's top documents among those current at K: documents of texts a later
//! version replaced ([`super::versions::TextVersions::replaced`]) are passed over inside
//! tantivy's collection, as deleted documents are, so they never take a place among the
//! best and a search never has to ask again for more.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::index::SegmentId;
use tantivy::query::Weight;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{
    BitSet, DocAddress, DocId, DocSet, Score, Searcher, SegmentReader, TERMINATED, Term,
};

use super::versions::Replaced;

/// In one segment, the documents a later text replaces, each with the knowledge time (ms)
/// from which it is not current.
#[derive(Default)]
pub(super) struct SegmentReplaced {
    marked: Option<BitSet>,
    until: HashMap<DocId, i64>,
}

impl SegmentReplaced {
    /// The documents of `segment` whose key (in `field`) `replaced` lists.
    fn read(
        segment: &SegmentReader,
        field: Field,
        replaced: &Replaced,
    ) -> tantivy::Result<SegmentReplaced> {
        let inverted = segment.inverted_index(field)?;
        let mut marked = BitSet::with_max_value(segment.max_doc());
        let mut until = HashMap::new();
        for (key, from) in replaced {
            let term = Term::from_field_text(field, key);
            let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic)?
            else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                marked.insert(doc);
                until.insert(doc, from.millis());
                doc = postings.advance();
            }
        }
        Ok(SegmentReplaced {
            marked: (!until.is_empty()).then_some(marked),
            until,
        })
    }

    fn current(&self, doc: DocId, known_at: i64) -> bool {
        match &self.marked {
            Some(marked) if marked.contains(doc) => {
                self.until.get(&doc).is_none_or(|until| known_at < *until)
            }
            _ => true,
        }
    }
}

/// Each segment's replaced documents, for the correction log read to `upto`: kept across
/// searches, segment by segment (segments never change; a new `upto` reads them again).
#[derive(Default)]
pub(super) struct ReplacedCache {
    upto: u64,
    segments: HashMap<SegmentId, Arc<SegmentReplaced>>,
}

impl ReplacedCache {
    /// The replaced documents of each of `searcher`'s segments, in segment order.
    pub(super) fn of(
        &mut self,
        searcher: &Searcher,
        field: Field,
        replaced: &Replaced,
        upto: u64,
    ) -> tantivy::Result<Vec<Arc<SegmentReplaced>>> {
        if self.upto != upto {
            self.segments.clear();
            self.upto = upto;
        }
        let mut out = Vec::with_capacity(searcher.segment_readers().len());
        let mut kept = HashMap::with_capacity(out.capacity());
        for segment in searcher.segment_readers() {
            let id = segment.segment_id();
            let found = match self.segments.remove(&id) {
                Some(found) => found,
                None => Arc::new(SegmentReplaced::read(segment, field, replaced)?),
            };
            kept.insert(id, found.clone());
            out.push(found);
        }
        // Segments merged away are forgotten.
        self.segments = kept;
        Ok(out)
    }
}

/// The best `limit` documents by score among those current at `known_at` (ms), as tantivy's
/// own top-score collection finds them: higher score first, the lower document on a tie,
/// block-max pruning on the limit-th score.
pub(super) struct CurrentTopDocs {
    pub limit: usize,
    pub known_at: i64,
    /// By segment ordinal.
    pub replaced: Vec<Arc<SegmentReplaced>>,
}

/// Better = higher score, then lower document.
#[derive(Clone, Copy)]
struct Entry(Score, DocId);

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .total_cmp(&other.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

pub(super) struct SegmentTop {
    limit: usize,
    known_at: i64,
    segment_ord: u32,
    replaced: Arc<SegmentReplaced>,
    /// The worst kept on top.
    heap: BinaryHeap<Reverse<Entry>>,
}

impl SegmentTop {
    /// The score a document must beat to be kept.
    fn threshold(&self) -> Score {
        match self.heap.peek() {
            Some(Reverse(worst)) if self.heap.len() >= self.limit => worst.0,
            _ => Score::MIN,
        }
    }
}

impl SegmentCollector for SegmentTop {
    type Fruit = Vec<(Score, DocAddress)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if self.limit == 0 || !self.replaced.current(doc, self.known_at) {
            return;
        }
        let entry = Entry(score, doc);
        if self.heap.len() >= self.limit
            && self
                .heap
                .peek()
                .is_some_and(|Reverse(worst)| entry <= *worst)
        {
            return;
        }
        self.heap.push(Reverse(entry));
        if self.heap.len() > self.limit {
            self.heap.pop();
        }
    }

    fn harvest(self) -> Self::Fruit {
        let ord = self.segment_ord;
        self.heap
            .into_iter()
            .map(|Reverse(Entry(score, doc))| (score, DocAddress::new(ord, doc)))
            .collect()
    }
}

impl Collector for CurrentTopDocs {
    type Fruit = Vec<(Score, DocAddress)>;
    type Child = SegmentTop;

    fn for_segment(
        &self,
        segment_ord: u32,
        _segment: &SegmentReader,
    ) -> tantivy::Result<SegmentTop> {
        Ok(SegmentTop {
            limit: self.limit,
            known_at: self.known_at,
            segment_ord,
            replaced: self
                .replaced
                .get(segment_ord as usize)
                .cloned()
                .unwrap_or_default(),
            heap: BinaryHeap::with_capacity(self.limit + 1),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Self::Fruit>) -> tantivy::Result<Self::Fruit> {
        let mut all: Vec<(Score, DocAddress)> = fruits.into_iter().flatten().collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        all.truncate(self.limit);
        Ok(all)
    }

    /// Scored with pruning, as tantivy's top-score collection is: a document is offered only
    /// when it beats the limit-th score kept so far.
    fn collect_segment(
        &self,
        weight: &dyn Weight,
        segment_ord: u32,
        reader: &SegmentReader,
    ) -> tantivy::Result<Self::Fruit> {
        let mut top = self.for_segment(segment_ord, reader)?;
        let alive = reader.alive_bitset();
        weight.for_each_pruning(Score::MIN, reader, &mut |doc, score| {
            if alive.is_none_or(|a| a.is_alive(doc)) {
                top.collect(doc, score);
            }
            top.threshold()
        })?;
        Ok(top.harvest())
    }
}
