-- SPDX-License-Identifier: MIT
-- Deterministic SQL workload for the sqlite3 CLI integration test
-- (run_program.sh sqlite): tables filled through recursive CTEs, indexes,
-- joins, GROUP BY, window functions, JSON, updates, deletes and VACUUM.
-- Every query orders its output or aggregates it, so the output depends on
-- the data only (no rowid order assumptions, no random(), no dates).
.headers on
.mode list
.nullvalue NULL
PRAGMA cache_size = 200;          -- a small page cache: more pager churn
PRAGMA journal_mode = MEMORY;

CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, tier INTEGER);
CREATE TABLE product (id INTEGER PRIMARY KEY, title TEXT, price_cents INTEGER, tags TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id),
                     product_id INTEGER REFERENCES product(id), qty INTEGER, note TEXT);

-- A deterministic pseudo-random sequence: an LCG in a recursive CTE.
WITH RECURSIVE seq(i, r) AS (
    SELECT 1, 12345
    UNION ALL
    SELECT i + 1, (r * 1103515245 + 12345) % 2147483648 FROM seq WHERE i < 3000
)
INSERT INTO customer
SELECT i, 'customer-' || printf('%05d', i) || '-' || substr('abcdefghijklmnopqrstuvwxyz', 1 + r % 26, 1 + r % 7),
       CASE r % 7 WHEN 0 THEN 'Oslo' WHEN 1 THEN 'Lima' WHEN 2 THEN 'Pune' WHEN 3 THEN 'Kyiv'
                  WHEN 4 THEN 'Accra' WHEN 5 THEN 'Quito' ELSE NULL END,
       r % 4
FROM seq;

WITH RECURSIVE seq(i, r) AS (
    SELECT 1, 777
    UNION ALL
    SELECT i + 1, (r * 1103515245 + 12345) % 2147483648 FROM seq WHERE i < 800
)
INSERT INTO product
SELECT i, 'product ' || i || ' ' || replace(printf('%.*c', 1 + r % 40, 'x'), 'x', 'ab'),
       100 + r % 100000,
       json_array('t' || (r % 5), 't' || (r % 11), 't' || (r % 3))
FROM seq;

WITH RECURSIVE seq(i, r) AS (
    SELECT 1, 4242
    UNION ALL
    SELECT i + 1, (r * 1103515245 + 12345) % 2147483648 FROM seq WHERE i < 20000
)
INSERT INTO orders
SELECT i, 1 + r % 3000, 1 + (r / 3000) % 800, 1 + r % 9,
       CASE WHEN r % 13 = 0 THEN NULL ELSE printf('note %d: %s', i, substr(printf('%0200d', r), 1, r % 200)) END
FROM seq;

CREATE INDEX orders_customer ON orders(customer_id);
CREATE INDEX orders_product ON orders(product_id, qty);
CREATE INDEX customer_city ON customer(city, tier);

SELECT 'counts', (SELECT count(*) FROM customer), (SELECT count(*) FROM product),
       (SELECT count(*) FROM orders);

-- Joins and GROUP BY.
SELECT c.city, c.tier, count(*) AS n, sum(o.qty * p.price_cents) AS revenue,
       count(DISTINCT o.product_id) AS products
FROM orders o JOIN customer c ON c.id = o.customer_id JOIN product p ON p.id = o.product_id
GROUP BY c.city, c.tier
ORDER BY c.city IS NULL, c.city, c.tier;

-- Top customers, with a window function for the rank.
SELECT * FROM (
    SELECT c.name, sum(o.qty * p.price_cents) AS spent,
           rank() OVER (ORDER BY sum(o.qty * p.price_cents) DESC, c.id) AS rk
    FROM orders o JOIN customer c ON c.id = o.customer_id JOIN product p ON p.id = o.product_id
    GROUP BY c.id
) WHERE rk <= 15 ORDER BY rk;

-- JSON: explode the tag arrays and aggregate.
SELECT j.value AS tag, count(*) AS n, sum(p.price_cents) AS total
FROM product p, json_each(p.tags) j
GROUP BY j.value ORDER BY n DESC, tag;

-- Long string aggregation (large, growing allocations).
SELECT length(group_concat(note, '|')), sum(length(note)), count(note)
FROM (SELECT note FROM orders ORDER BY id);

SELECT substr(group_concat(title, ';'), 1, 120)
FROM (SELECT title FROM product WHERE price_cents % 17 = 0 ORDER BY id);

-- Correlated subquery and EXISTS.
SELECT p.id, p.price_cents,
       (SELECT max(qty) FROM orders o WHERE o.product_id = p.id) AS maxq
FROM product p
WHERE EXISTS (SELECT 1 FROM orders o WHERE o.product_id = p.id AND o.qty = 9)
ORDER BY p.price_cents DESC, p.id LIMIT 10;

-- Updates, deletes, re-aggregation.
UPDATE orders SET note = upper(note) || '!' WHERE id % 7 = 0;
DELETE FROM orders WHERE qty = 1 OR note IS NULL;
UPDATE customer SET city = 'Moved' WHERE tier = 3 AND id % 5 = 0;
SELECT city, count(*) FROM customer GROUP BY city ORDER BY city IS NULL, city;
SELECT count(*), sum(qty), sum(length(note)) FROM orders;

-- A temporary table built from a self-join, then dropped again.
CREATE TEMP TABLE pairs AS
SELECT a.customer_id AS c1, b.customer_id AS c2, count(*) AS shared
FROM orders a JOIN orders b ON a.product_id = b.product_id AND a.customer_id < b.customer_id
WHERE a.customer_id <= 300 AND b.customer_id <= 300
GROUP BY 1, 2;
SELECT count(*), max(shared), sum(shared) FROM pairs;
SELECT * FROM pairs ORDER BY shared DESC, c1, c2 LIMIT 5;
DROP TABLE pairs;

-- Rebuild the file, then check integrity.
DROP INDEX orders_product;
VACUUM;
PRAGMA integrity_check;
SELECT 'done';
