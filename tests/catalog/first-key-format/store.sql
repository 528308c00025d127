CREATE TABLE n (id INTEGER PRIMARY KEY, r REAL, big INTEGER, name TEXT COLLATE NOCASE, b BLOB);
CREATE INDEX n_r ON n (r);
CREATE INDEX n_big ON n (big DESC, name);
CREATE UNIQUE INDEX n_name ON n (name);
CREATE INDEX n_positive ON n (r) WHERE big > 0;
CREATE TABLE pair (a TEXT, x REAL, v INTEGER, PRIMARY KEY (a, x DESC));
CREATE INDEX pair_v ON pair (v DESC);
INSERT INTO n VALUES
  (-5, -0.0, 9007199254740993, 'Minus five', x'00ff'),
  (0, 1.5, -9007199254740993, 'zero', NULL),
  (1, -1e300, 9223372036854775807, 'One', x''),
  (9007199254740993, 1e300, -9223372036854775808, 'big', x'01'),
  (9223372036854775807, 3.0, 0, 'max', NULL),
  (-9223372036854775808, NULL, NULL, 'min', NULL),
  (42, 2.5e-308, 42, 'forty-two', NULL),
  (7, -7.25, -7, NULL, NULL);
INSERT INTO pair VALUES ('a', 1.0, 1), ('a', -2.5, 2), ('a', 1e20, 3), ('b', 0.0, -4), ('B', 3.0, 9007199254740993);
CREATE VIEW positive AS SELECT id, name FROM n WHERE big > 0;
CREATE MATERIALIZED VIEW by_sign AS SELECT big > 0 AS positive, count(*) AS n, sum(r) AS total FROM n GROUP BY big > 0;
PRAGMA qstore.change_log = 100;
INSERT INTO pair VALUES ('c', -1.0, -1);
UPDATE n SET r = 0.5 WHERE id = 7;
DELETE FROM n WHERE id = 42;
