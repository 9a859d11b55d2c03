/* ddb--0.1--0.2.sql: upgrade ddb 0.1 to 0.2 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION ddb UPDATE TO '0.2'" to load this file. \quit

-- ddb 0.1's install script is frozen.  CREATE EXTENSION ddb installs 0.2 by
-- running it and then this script, so everything new or changed since 0.1
-- is here, and a fresh install and an upgraded one are the same.
-- Since 0.1 the sources live in layer folders: src/engine, src/model,
-- src/api, src/planner (the 0.1 script's comments name the old paths).
