-- As-of join in SQL (the calculus post's orders and prices; billing.dl is its Datalog
-- form, with the same items and prices): each order is billed at the price its item
-- had at the order's time `at` -- the price row with the latest `since` <= `at` -- as
-- the prices table was when the order arrived. Later price changes (a new price, a
-- late correction, a deleted row) do not rewrite orders already billed. A retraction
-- of an order is looked up at the prices of *its* moment: if they changed in between,
-- it does not cancel the original row (the change log shows both events).
-- ASOF LEFT JOIN keeps orders of items without a price (cents NULL).
-- Tables (asof/*.csv): orders(id int, item text, at int), prices(item text, since int, cents int).
CREATE VIEW billed AS
SELECT o.id, o.item, p.cents
FROM orders o ASOF LEFT JOIN prices p ON o.item = p.item AND o.at >= p.since
ORDER BY o.id;
