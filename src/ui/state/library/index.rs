//! Book id → index into the library's books, holding only `u32` indices:
//! a map keyed by cloned ids held a second copy of every id (~7 MB for
//! 100k books).

use crate::domain::{Book, BookId};
use hashbrown::HashTable;
use std::hash::{BuildHasher, RandomState};

#[derive(Default)]
pub(super) struct IdIndex {
    table: HashTable<u32>,
    hasher: RandomState,
}

impl IdIndex {
    pub fn build(books: &[Book]) -> Self {
        let mut index = IdIndex {
            table: HashTable::with_capacity(books.len()),
            hasher: RandomState::new(),
        };
        for i in 0..books.len() {
            index.insert(books, i);
        }
        index
    }

    /// Where `id` is in `books` (the slice this index was built over).
    pub fn get(&self, books: &[Book], id: &BookId) -> Option<usize> {
        let hash = self.hasher.hash_one(id);
        self.table
            .find(hash, |&i| books[i as usize].id == *id)
            .map(|&i| i as usize)
    }

    /// Indexes `books[i]` (a book just pushed whose id is not indexed yet).
    pub fn insert(&mut self, books: &[Book], i: usize) {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(&books[i].id);
        self.table
            .insert_unique(hash, i as u32, |&j| hasher.hash_one(&books[j as usize].id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(id: &str) -> Book {
        Book {
            id: BookId::new(id),
            ..Book::default()
        }
    }

    #[test]
    fn finds_every_book_built_over_and_pushed_later_and_no_other() {
        let mut books: Vec<Book> = (0..1_000).map(|i| book(&format!("b{i}"))).collect();
        let mut index = IdIndex::build(&books);
        for i in 1_000..1_100 {
            books.push(book(&format!("b{i}")));
            index.insert(&books, i);
        }
        for (i, b) in books.iter().enumerate() {
            assert_eq!(index.get(&books, &b.id), Some(i));
        }
        assert_eq!(index.get(&books, &BookId::new("b1100")), None);
        assert_eq!(index.get(&books, &BookId::new("")), None);
    }
}
