-- The DuckDB-oracle corpus: one query per statement (ending in ';' at the end of a line),
-- over t(a int, b int, c text, d double), s(a int, b int, e text), edge(src int, dst int),
-- all nullable, generated with NULLs and duplicate rows (tests/compiler/sql/oracle.py).
-- Queries with ORDER BY order by all their columns (selected or not), so the expected order is definite.

-- projections, expressions, WHERE
select a, b from t;
select a + b as s, a - b, a * b from t;
select a / 2, b / 4.0 from t where b <> 0;
select a % 3, -b, abs(b) from t;
select d * 2, d + a, d - 1 from t;
select a, b from t where a > 2;
select a, b from t where a > 2 and b < 3;
select a, b from t where a > 2 or b < 0;
select a, b from t where not (a > 2);
select a, b from t where a = b;
select a, b from t where a <> b;
select a from t where a is null;
select a, b from t where a is not null and b is null;
select a, c from t where c = 'apple';
select a, c from t where c like 'a%';
select a, c from t where c like '%e';
select a, c from t where c like '_a%';
select a, c from t where c not like '%a%';
select a, c from t where c ilike 'a%';
select a, c from t where c like 'a!%%' escape '!' or c not like '%!_' escape '!';
select a, b from t where a between 1 and 3;
select a, b from t where a not between 1 and 3;
select a, b from t where a in (1, 3, 5);
select a, b from t where a not in (1, 3);
select a, b from t where a in (1, null);
select a, b from t where a not in (1, null);
select a, b, a > b as gt from t;
select a, (a > 1) and (b > 1) as both_, (a > 1) or (b > 1) as either from t;
select case when a > 3 then 'big' when a > 1 then 'mid' else 'small' end as size, a from t;
select case a when 1 then 'one' when 2 then 'two' end as name, a from t;
select case when b > 0 then b end as pos from t;
select coalesce(a, b, -1) as v from t;
select coalesce(c, 'none') as v from t;
select nullif(a, 2) as v, a from t;
select cast(a as double) as x, cast(d as bigint) as y from t;
select cast(a as varchar) as x from t;
select lower(c), upper(c), length(c) from t;
select substring(c, 2, 3) as x, c from t;
select substring(c, 1, 1) as x from t;
select c, substring(c, -2, 2), substring(c, -1), substring(c, 3, -2) from t;
select a, b from t where (a > 1) = (b < 3);
select a, (a > 2) <> (d > 0) from t;
select a, b, a is distinct from b, a is not distinct from b from t;
select t.a, s.b from t join s on t.a is not distinct from s.a;
select d, floor(d), ceil(d), round(d), round(d, 1), round(d, -1), floor(a), round(a), round(a, -1) from t;
select a, c || a, c || d, cast(a > 1 as text) from t;
select a, d, cast(a as bool), cast(d as bool), try_cast(cast(d as text) as double), try_cast(c as double) from t;
select a, cast(cast(a as text) as bigint), cast(cast(d as text) as double), try_cast(c as bigint), try_cast(cast(d as text) as bigint) from t;
select c || '!' as x from t;
select concat(c, '-', cast(a as varchar)) as x from t;
select greatest(a, b) as g, least(a, b) as l from t;
select a, b, if(a > b, a, b) as m from t;
select 1 as one, 'x' as x, 2.5 as y;
select a from t where c = 'apple' or c is null;
select a, b from t where (a + b) * 2 > 5;

-- DISTINCT, duplicates
select distinct d * 0 from t;
select -d * 0, count(*) from t group by -d * 0;
select distinct a from t;
select distinct a, b from t;
select distinct c from t where a > 1;
select distinct a is null as n from t;

-- joins
select t.a, s.e from t join s on t.a = s.a;
select t.a, t.b, s.b from t join s on t.a = s.a and t.b = s.b;
select t.a, s.a from t join s on t.a < s.a where t.b = 1;
select t.a, s.e from t, s where t.a = s.a and s.b > 0;
select t.a, s.e from t left join s on t.a = s.a;
select t.a, t.c, s.e from t left join s on t.a = s.a and s.b > 0;
select t.a, s.a, s.e from t right join s on t.a = s.a;
select t.a, t.b, s.a, s.b from t full join s on t.a = s.a;
select t.a, s.e from t left join s on t.a = s.a where s.e is null;
select x.a, y.a from t as x cross join s as y where x.b = y.b;
select e1.src, e2.dst from edge e1 join edge e2 on e1.dst = e2.src;
select e1.src, e3.dst from edge e1 join edge e2 on e1.dst = e2.src join edge e3 on e2.dst = e3.src;
select t.a, s.b from t left join s on t.a = s.a left join edge on s.b = edge.src;
select t.a, s.e, edge.dst from t join s on t.a = s.a left join edge on t.b = edge.src;
select t.a from t left join s on t.c = s.e where s.a is null;

-- GROUP BY and aggregates
select a, bool_and(b > 0), bool_or(d > 1) from t group by a;
select a, count(*) filter (where b > 0), sum(b) filter (where d > 1), max(c) filter (where b < 2), count(*) from t group by a;
select count(*) filter (where b > 100), avg(d) filter (where a = 1) from t;
select count(*) from t;
select count(a), count(c), count(d) from t;
select sum(a), min(a), max(a) from t;
select avg(a), avg(d) from t;
select sum(d), min(d), max(d) from t;
select count(distinct a), count(distinct c) from t;
select a, count(*) from t group by a;
select a, count(b), sum(b), min(b), max(b) from t group by a;
select a, avg(b) from t group by a;
select c, count(*) as n from t group by c;
select a, b, count(*) from t group by a, b;
select a, b, count(*) as n, sum(d) from t group by all;
select a + 1 as k, count(*) from t group by all;
select a, count(distinct b) from t group by a;
select a, sum(distinct b) from t group by a;
select a, count(*) from t group by a having count(*) > 1;
select a, sum(b) from t group by a having sum(b) > 2;
select a, max(d) - min(d) as spread from t group by a;
select a + 1 as k, count(*) from t group by a + 1;
select count(*) from t where a > 100;
select sum(a), max(c is null) from t where a > 100;
select b, count(*) from t where a is not null group by b having min(a) < 3;
select s.a, count(t.b) from s left join t on s.a = t.a group by s.a;
select a, count(*) * 2 + 1 from t group by a;
select e.src, count(*) as out_degree from edge e group by e.src;

-- subqueries
select a, a in (select a from s), a not in (select b from s) from t;
select a, b, exists (select 1 from s where s.a = t.a and s.b > t.b) from t;
select a, b from t where a in (select a from s) or b > 3;
select a, b, b > all (select b from s), b <= any (select b from s where s.a = t.a) from t;
select a, b from t where b >= all (select b from s where s.a = t.a);
select a, b, (a, b) in (select a, b from s), (b, a) not in (select a, b from s where b > 0) from t;
select a, b from t where (a, b) not in (select a, b from s);
select t.a, s.b from t left join s on t.a = s.a and s.b in (select b from s where e > 'b');
select t.a, s.a from t join s on t.b < (select max(b) from s) and t.a = s.a;
select a, case when not exists (select 1 from s where s.e = t.c) then c end from t;
select a, n from (select a, count(*) as n from t group by a) as g where n > 1;
select x from (select a + b as x from t) as q where x > 2;
select a, b from t where a in (select a from s);
select a, b from t where a not in (select a from s);
select a, b from t where a not in (select a from s where a is not null);
select a, b from t where a in (select a from s where s.b = t.b);
select a, b from t where exists (select 1 from s where s.a = t.a);
select a, b from t where not exists (select 1 from s where s.a = t.a);
select a, b from t where exists (select 1 from s where s.a = t.a and s.b > t.b);
select a, b from t where not exists (select 1 from s where s.b = t.b) and a > 1;
select a, b from t where exists (select 1 from s);
select a from t where b > (select min(b) from s);
select a, (select max(b) from s) as m from t;
select a from t where a = (select max(a) from s);
select a from t where c in (select e from s where e is not null);

-- set operations
select a from t union select a from s;
select a from t union all select a from s;
select a, b from t union all select a, b from s;
select a from t intersect select a from s;
select a from t except select a from s;
select a, b from t except select a, b from s;
select c from t union select e from s;
select a, d from t union all select a, b from s;
select c from t union all select null;
select null, c from t union select a, null from s;

-- WITH
with big as (select a, b from t where a > 1) select big.a, s.e from big join s on big.a = s.a;
with g as (select a, count(*) as n from t group by a) select a, n from g where n >= 2;
with x as (select a from t), y as (select a from x where a > 2) select a from y;
with x as (select a from t) select x1.a, x2.a from x as x1 join x as x2 on x1.a = x2.a + 1;
WITH Big AS (SELECT A, B FROM T WHERE t.A > 1) SELECT big.a, S.E FROM BIG JOIN s ON Big.A = S.a;
SELECT X.Src, COUNT(*) AS N FROM Edge AS x GROUP BY x.SRC;

-- ORDER BY and LIMIT
select a, b from t order by a, b;
select a, b from t order by a desc, b;
select distinct a from t order by a;
select a, b from t order by a nulls first, b nulls first;
select a, c from t order by c desc, a;
select a, b from t order by a, b limit 5;
select a, b from t order by a desc, b desc limit 4;
select a, b from t order by a, b limit 3 offset 2;
select a, count(*) as n from t group by a order by n desc, a limit 3;
select c, a from t order by c, a limit 4;
select a, c from t order by b desc, a, c, d limit 5;
select a from t order by b nulls first, c, d, a;
select c from t order by a + b, a, b, c, d limit 4;
select e from s order by s.b desc, a, e offset 3;
select a, count(*) as n from t group by a order by sum(b) desc nulls last, a limit 3;
select t.a, s.e from t join s on t.a = s.a order by t.b, s.b, t.a, t.c, t.d, s.e limit 6;

-- recursion
with recursive r(x, y) as (select src, dst from edge union select r.x, e.dst from r join edge e on r.y = e.src) select x, y from r;
with recursive r(n) as (select 1 union all select n + 1 from r where n < 10) select n from r;
with recursive r(n) as (select 1 union select n + 1 from r where n < 20) select sum(n) from r;
with recursive reach(v) as (select 0 union select e.dst from reach join edge e on reach.v = e.src) select v from reach;
with recursive reach(v) as (select src from edge where src = 1 union select e.dst from edge e join reach on e.src = reach.v) select count(*) from reach;
with recursive p(x, y, len) as (select src, dst, 1 from edge union all select p.x, e.dst, p.len + 1 from p join edge e on p.y = e.src where p.len < 3) select x, y, len from p;
with recursive r(x, y) as (select src, dst from edge union select e.src, r.y from edge e join r on e.dst = r.x) select x, count(*) from r group by x;
with recursive r(x, y) as (select src, dst from edge where src is not null and dst is not null union select r.x, e.dst from r join edge e on r.y = e.src) select x, y from r where x = y;
with recursive f(n, v) as (select 0, 1 union all select n + 1, v * 2 from f where n < 8) select n, v from f;
with recursive r(x) as (select a from t where a is not null union select x + 1 from r where x < 8) select x from r;
with recursive r(v) as (select 0 union select e.dst from r join edge e on r.v = e.src where exists (select 1 from s where s.a = e.dst)) select v from r;
with recursive r(v) as (select 0 union select e.dst from r join edge e on r.v = e.src where not exists (select 1 from s where s.a = e.dst and s.b > 3)) select v from r;
with recursive r(v) as (select 0 union select e.dst from r join edge e on r.v = e.src where e.dst in (select s.a from s where s.b >= e.src - 3)) select v from r;
with recursive r(v) as (select 0 union select e.dst from r join edge e on r.v = e.src where e.dst <= (select max(s.a) from s where s.b <= e.src) + 1) select v from r;
with recursive r(n, m) as (select 1, 0 union all select n + 1, (select count(*) from s where s.a = r.n) from r where n < 6) select n, m from r;
with recursive r(n) as (select 0 union all select n + 1 from r where n < (select max(t.a) from t where t.b = r.n)) select n from r;
with recursive r(v) as (select 0 union select v + 1 from (with y as (select v from r) select v from y) as x where v < 3) select v from r;

-- texts in string order (code point order, as DuckDB; symbol ids are in arrival order)
select a, c from t where c < 'c';
select a, c from t where c >= 'banana' and c <= 'fig';
select c from t where c between 'b' and 'd';
select c from t where c not between 'Apple' and 'cherry';
select t.c, s.e from t join s on t.a = s.a where t.c > s.e;
select t.a, t.c, s.e from t join s on t.a = s.a and t.c <= s.e;
select c, c > 'b' as after_b, c <= '' as empty from t;
select greatest(c, 'c') as g, least(c, 'c') as l from t;
select min(c), max(c) from t;
select a, min(c), max(c) from t group by a;
select min(c), max(e) from t join s on t.a = s.a;
select b, max(c) as m from t group by b having max(c) >= 'cherry';
select a, count(*) from t group by a having min(c) < 'c';
select min(c), max(c), count(c) from t where a > 100;
select c, count(*) as n from t group by c order by c;
select e, a from s order by e desc nulls first, a nulls first;
select distinct c from t order by c desc limit 3;
select a, max(c) as m from t group by a order by m nulls first, a nulls first;

-- JOIN ... USING and NATURAL JOIN (a USING column once in *, COALESCE of both sides)
select * from t join s using (a);
select * from t left join s using (a);
select * from t right join s using (a, b);
select * from t full join s using (a);
select * from t full join s using (a, b);
select a, b, e from t natural join s;
select * from t natural left join s;
select * from t natural full join s;
select a, count(*) from t join s using (a) group by a;
select * from t join s using (a) join edge on edge.src = a;
select x.a, x.b, y.b from t as x join s as y using (a) where a > 1;
select * from (select a, b from t) as p join (select a, e from s) as q using (a);
with g as (select a, count(*) as n from t group by a) select * from g join s using (a);
select * from t join s using (a) join s as s2 using (a);
select * from edge e1 join edge e2 using (src);
select distinct a from t natural join s where e is not null;

-- correlated scalar subqueries (decorrelated: grouped per outer value, LEFT-joined back)
select a, (select max(b) from s where s.a = t.a) as m from t;
select a, b from t where b > (select avg(b) from s where s.a = t.a);
select a, (select count(*) from s where s.a = t.a) as n from t;
select a, (select count(s.e) from s where s.a = t.a and s.b < t.b) as n from t;
select a, (select min(e) from s where s.b = t.b) as m from t;
select a, (select sum(s.b) from s where s.a = t.a) + 1 as m from t;
select t.a, (select max(e.dst) from edge e where e.src = t.a) as far from t where t.b is not null;
select a, b from t where a = (select min(s.a) from s where s.b = t.b);
select a, coalesce((select max(b) from s where s.a = t.a), -1) as m from t;
select a, (select count(*) from s where s.a = t.a) as n, (select max(s.b) from s where s.b < t.b) as m from t;
select a, count(*), (select count(*) from s where s.a = t.a) as n from t group by a;
select a, (select max(x.b) from s as x where x.a = t.a having count(*) > 1) as m from t;
select e.src, (select count(*) from edge f where f.src = e.dst) as next from edge e;
select a from t group by a having count(*) > (select count(*) from s where s.a = t.a);
select a, (select count(distinct e) from s where s.a = t.a) as n from t;
select a, b, (select count(*) from s where s.a = t.a and s.b = t.b) as n from t;
select a, case when (select count(*) from s where s.a = t.a) > 1 then 'many' else 'few' end as k from t;
select a, b from t where b < 0 or b > (select max(s.b) from s where s.a = t.a);
select a, b from t where exists (select 1 from s where s.a = t.a having count(*) > 1);
select a, b from t where b in (select max(s.b) from s where s.a = t.a);
select a, b from t where b not in (select min(s.b) from s where s.a = t.a);
select a, (select max(s.b) from s where s.a = t.a and s.b > (select min(e.dst) from edge e where e.src = t.a)) as m from t;
select a, (select max(s.b) from s where s.a = t.a and s.b < (select min(e.dst) from edge e where e.src = s.a)) as m from t;
select x.a, (select count(*) from t as y where y.a < x.a) as rank_ from t as x;
select a, (select max(b) from s where s.a = t.a group by s.a) as m from t;
