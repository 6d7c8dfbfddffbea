import { CommaList } from './comma-list';

describe('CommaList', () => {
  it.each([
    ['a,b', ['a', 'b']],
    [' a , b ,', ['a', 'b']],
    ['a,,b', ['a', 'b']],
    ['', []],
    [' , ', []],
  ])('reads %j as %j', (value, entries) => {
    expect(CommaList.parse(value)).toEqual(entries);
  });
});
